"""Builds VectorRecall from Config (called once by app.start)."""

from __future__ import annotations

from pathlib import Path

from memoryd.domain import recall
from memoryd.domain.store import Store
from memoryd.domain.vectors import VectorIndex
from memoryd.vectors import engine_sync
from memoryd.vectors.embedder import OpenAIEmbedder
from memoryd.vectors.recall import VectorRecall

# Where the embedded vector store lives under the data dir, and where earlier releases
# kept theirs (qdrant-client local mode; migrated into Edge on first start).
EDGE_FOLDER = "vectors"
LOCAL_MODE_FOLDER = "qdrant"


def build_index(config, *, hosting: bool = True) -> VectorIndex:
    """A Qdrant server when MEMORYD_QDRANT_URL is set, else Qdrant Edge under <data_dir>/vectors
    (with --workers N: the engine process the workers share, edge_shared.py). `hosting`: an
    engine process started here hosts the data dir's background work (ENGINE_HOOKS; not for
    the CLI's one-off jobs, which synchronize themselves)."""
    if config.qdrant_url:
        from memoryd.storage.qdrant.server import QdrantServerIndex

        return QdrantServerIndex(
            config.qdrant_url,
            api_key=config.qdrant_api_key,
            prefer_grpc=config.qdrant_grpc_port > 0,
            grpc_port=config.qdrant_grpc_port or 6334,
            prefix=config.qdrant_collection_prefix,
            timeout=config.qdrant_timeout_seconds,
        )
    from memoryd.storage.qdrant.edge import EdgeIndex

    data_dir = Path(config.data_dir)
    settings = edge_settings(config)
    if config.vector_engine_process:
        from memoryd.storage.qdrant import edge_shared
        from memoryd.storage.qdrant.edge_process import EdgeProcessIndex

        if config.workers > 1:
            return EdgeProcessIndex(
                data_dir / EDGE_FOLDER, socket_path=edge_shared.socket_path(data_dir), log_level=config.log_level, **settings
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


# Background work the engine process hosts on SQLite, one per data dir ("module:function",
# called as `await function(engine)`: storage/qdrant/edge_process.py): the index synchronizer.
ENGINE_HOOKS: tuple[str, ...] = (engine_sync.HOOK,)


def engine_host(config) -> dict:
    """EdgeProcessIndex's `database`, `hooks` and `options`: the data dir's SQLite file and the
    synchronizer's settings (nothing on MongoDB: its synchronizer runs in the serving processes)."""
    if config.mongodb_uri:
        return {"database": None, "hooks": (), "options": None}
    options = {"sync": engine_sync.settings(config), "env": engine_sync.secrets(config)}
    return {"database": Path(config.data_dir) / "memoryd.db", "hooks": ENGINE_HOOKS, "options": options}


def engine_synchronizes(config) -> bool:
    """Whether the engine process runs the index synchronizer (the embedded default)."""
    return not (config.qdrant_url or config.mongodb_uri) and config.vector_engine_process


def shared_engine(config):
    """The engine process `--workers N` share on the embedded default (None when there is none)."""
    if not config.vectors_enabled or config.qdrant_url or not config.vector_engine_process:
        return None
    from memoryd.storage.qdrant import edge_process, edge_shared

    host = engine_host(config)
    return edge_shared.SharedEngine(
        Path(config.data_dir), Path(config.data_dir) / EDGE_FOLDER, edge_settings(config), log_level=config.log_level,
        host=edge_process.host_spec(host["database"], host["hooks"], host["options"]),
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
    """`serving`: for a server (on the embedded default the engine process synchronizes and
    this process follows it); False for the CLI's jobs (they synchronize themselves)."""
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
        sync_in_engine=in_engine,
    )
