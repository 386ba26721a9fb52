"""Builds VectorRecall from Config (called once by app.start), and says what the embedded
engine process (memoryd/engine.py) hosts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from memoryd.consumers.remote import RemoteTrack, RuntimeLink
from memoryd.domain import recall
from memoryd.domain.store import Store
from memoryd.domain.vectors import VectorIndex
from memoryd.formation import engine as formation_engine
from memoryd.observability.metrics import VECTOR_SYNC_LAG
from memoryd.vectors.embedder import OpenAIEmbedder
from memoryd.vectors.recall import VectorRecall
from memoryd.vectors.sync import CURSOR_NAMESPACE

# Where the embedded vector store lives under the data dir, and where earlier releases
# kept theirs (qdrant-client local mode; migrated into Edge on first start).
EDGE_FOLDER = "vectors"
LOCAL_MODE_FOLDER = "qdrant"
# The program of the engine process that runs the log consumers (`python -m`: memoryd/engine.py).
ENGINE_ENTRY = "memoryd.engine"
# The embedder's key reaches the engine process in its environment, not its command line.
API_KEY_ENV = "MEMORYD_ENGINE_EMBEDDER_API_KEY"


def build_index(config, *, hosting: bool = True) -> VectorIndex:
    """A Qdrant server when MEMORYD_QDRANT_URL is set, else Qdrant Edge under <data_dir>/vectors
    (with --workers N: the engine process the workers share, edge_shared.py). `hosting`: an
    engine process started here runs the data dir's log consumers (memoryd/engine.py; not for
    the CLI's one-off jobs, which apply the logs themselves)."""
    if config.qdrant_url:
        from memoryd.storage.qdrant.server import CollectionLayout, QdrantServerIndex

        return QdrantServerIndex(
            config.qdrant_url,
            api_key=config.qdrant_api_key,
            prefer_grpc=config.qdrant_grpc_port > 0,
            grpc_port=config.qdrant_grpc_port or 6334,
            prefix=config.qdrant_collection_prefix,
            timeout=config.qdrant_timeout_seconds,
            layout=CollectionLayout(
                shards=config.qdrant_shards,
                replication_factor=config.qdrant_replication_factor,
                write_consistency=config.qdrant_write_consistency,
            ),
        )
    from memoryd.storage.qdrant.edge import EdgeIndex

    data_dir = Path(config.data_dir)
    settings = edge_settings(config)
    if config.vector_engine_process:
        from memoryd.storage.qdrant import edge_shared
        from memoryd.storage.qdrant.edge_process import EdgeProcessIndex

        if config.workers > 1:
            return EdgeProcessIndex(
                data_dir / EDGE_FOLDER,
                socket_path=edge_shared.socket_path(data_dir),
                log_level=config.log_level,
                **settings,
            )
        host = engine_host(config) if hosting else {}
        return EdgeProcessIndex(data_dir / EDGE_FOLDER, log_level=config.log_level, **host, **settings)
    return EdgeIndex(data_dir / EDGE_FOLDER, **settings)


def edge_settings(config) -> dict:
    """EdgeIndex's keyword arguments from Config."""
    data_dir = Path(config.data_dir)
    return dict(
        prefix=config.qdrant_collection_prefix,
        timeout=config.qdrant_timeout_seconds,
        threads=config.vector_threads,
        build_threads=config.vector_build_threads,
        rebuild_threshold_kb=config.vector_rebuild_threshold_kb,
        min_free_mb=config.vector_min_free_mb,
        erase_seconds=config.vector_erase_seconds,
        migrate_from=data_dir / LOCAL_MODE_FOLDER,
    )


def engine_settings(config) -> dict[str, Any]:
    """What the engine's log consumers need of Config (plain values: the engine's command line)."""
    return {
        "keywords": config.index_message_keywords,
        "control_kinds": [k.strip() for k in config.recall_control_kinds.split(",") if k.strip()],
        "batch": config.index_sync_batch,
        "poll_seconds": config.vector_sync_poll_seconds,
        "max_backoff_seconds": config.vector_sync_max_backoff_seconds,
        "embedder_url": config.embedder_url,
        "embedder_model": config.embedder_model,
        "embedder_model_id": config.embedder_model_id,
        "sqlite_synchronous": config.sqlite_synchronous,
    }


def engine_host(config) -> dict:
    """EdgeProcessIndex's `database`, `entry` and `options`: the data dir's SQLite file, the
    engine program that runs the log consumers (the recall index's, and memory formation's
    with --llm-url), and their settings (nothing on MongoDB: its consumers run in the serving
    processes)."""
    if config.mongodb_uri:
        return {"database": None, "entry": None, "options": None}
    secrets = {API_KEY_ENV: config.embedder_api_key} if config.embedder_api_key else {}
    # Memory formation's consumers run there too (formation/engine.py), with --llm-url.
    formation, formation_secrets = formation_engine.engine_options(config)
    options = {"sync": engine_settings(config), "formation": formation, "env": {**secrets, **formation_secrets}}
    return {"database": Path(config.data_dir) / "memoryd.db", "entry": ENGINE_ENTRY, "options": options}


def engine_synchronizes(config) -> bool:
    """Whether the engine process runs the log consumers (the embedded default)."""
    return not (config.qdrant_url or config.mongodb_uri) and config.vector_engine_process


def shared_engine(config):
    """The engine process `--workers N` share on the embedded default (None when there is none)."""
    if not config.vectors_enabled or config.qdrant_url or not config.vector_engine_process:
        return None
    from memoryd.storage.qdrant import edge_process, edge_shared

    host = engine_host(config)
    return edge_shared.SharedEngine(
        Path(config.data_dir), Path(config.data_dir) / EDGE_FOLDER, edge_settings(config), log_level=config.log_level,
        host=edge_process.host_spec(host["database"], host["options"]), entry=host["entry"],
    )  # fmt: skip


FUSIONS = {"relative": recall.Fusion.RELATIVE_SCORE, "rrf": recall.Fusion.RECIPROCAL_RANK}


def recall_defaults(config) -> recall.RecallDefaults:
    """The ranking defaults of SearchMemory and SearchEntries (Config bounds the numbers); an
    unknown fusion stops the start."""
    if config.recall_fusion not in FUSIONS:
        raise ValueError(f"recall_fusion must be one of {', '.join(FUSIONS)}")
    return recall.RecallDefaults(
        time_weight=config.recall_time_weight,
        half_life_ms=max(1, int(config.recall_half_life_hours * 3600 * 1000)),
        keyword_weight=config.recall_keyword_weight,
        fusion=FUSIONS[config.recall_fusion],
        neighbor_weight=config.recall_neighbor_weight,
    )


def build_vectors(config, store: Store, *, serving: bool = True) -> VectorRecall:
    """`serving`: for a server (on the embedded default the engine process runs the index's
    log consumer and this process follows its positions); False for the CLI's jobs (they
    apply the logs themselves)."""
    in_engine = serving and engine_synchronizes(config)
    index = build_index(config, hosting=serving)
    embedder = None
    if config.embedder_url:
        embedder = OpenAIEmbedder(
            config.embedder_url,
            config.embedder_model,
            api_key=config.embedder_api_key,
            model_id=config.embedder_model_id,
        )
    kinds = tuple(k.strip() for k in config.recall_control_kinds.split(",") if k.strip())
    return VectorRecall(
        index,
        store,
        defaults=recall_defaults(config),
        control_kinds=kinds,
        embedder=embedder,
        index_message_keywords=config.index_message_keywords,
        sync_batch=config.index_sync_batch,
        sync_poll_seconds=config.vector_sync_poll_seconds,
        sync_max_backoff_seconds=config.vector_sync_max_backoff_seconds,
        # Several processes on one store: one synchronizer at a time (vectors/lease.py).
        sync_lease=not in_engine and (bool(config.mongodb_uri) or config.workers > 1),
        positions=RemoteTrack(
            cast(RuntimeLink, index),  # an EdgeProcessIndex: a RuntimeLink to the engine's runtime
            store,
            CURSOR_NAMESPACE,
            poll_seconds=config.vector_sync_poll_seconds,
            lag_gauge=VECTOR_SYNC_LAG,
        )
        if in_engine
        else None,
    )
