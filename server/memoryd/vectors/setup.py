"""Builds the vector memory from Config (called once by app.start)."""

from __future__ import annotations

from pathlib import Path

from memoryd.domain.store import Store
from memoryd.storage.qdrant.index import QdrantIndex
from memoryd.vectors.embedder import OpenAIEmbedder
from memoryd.vectors.memory import VectorMemory


def build_vectors(config, store: Store) -> VectorMemory:
    """Qdrant server when MEMORYD_QDRANT_URL is set, else local mode under <data_dir>/qdrant."""
    if config.qdrant_url:
        index = QdrantIndex(
            url=config.qdrant_url,
            api_key=config.qdrant_api_key,
            prefer_grpc=config.qdrant_grpc_port > 0,
            grpc_port=config.qdrant_grpc_port or 6334,
            prefix=config.qdrant_collection_prefix,
            timeout=config.qdrant_timeout_seconds,
        )
    else:
        index = QdrantIndex(
            path=Path(config.data_dir) / "qdrant",
            prefix=config.qdrant_collection_prefix,
            timeout=config.qdrant_timeout_seconds,
        )
    embedder = None
    if config.embedder_url:
        embedder = OpenAIEmbedder(
            config.embedder_url,
            config.embedder_model,
            api_key=config.embedder_api_key,
            model_id=config.embedder_model_id,
        )
    kinds = tuple(k.strip() for k in config.recall_control_kinds.split(",") if k.strip())
    return VectorMemory(
        index,
        store,
        half_life_ms=max(1, int(config.recall_half_life_hours * 3600 * 1000)),
        control_kinds=kinds,
        embedder=embedder,
        index_concurrency=config.index_concurrency,
        index_queue_size=config.index_queue_size,
        outbox_poll_seconds=config.vector_outbox_poll_seconds,
        outbox_max_backoff_seconds=config.vector_outbox_max_backoff_seconds,
    )
