"""Configuration: one frozen dataclass, loaded once at the entry point from flags and environment.

Every setting has an environment variable (MEMORYD_*) and a flag; a flag wins over
the environment, the environment over the default. README.md documents the table.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field, fields
from pathlib import Path

from memoryd.domain.limits import Limits


@dataclass(frozen=True, slots=True)
class Config:
    listen: str = "127.0.0.1:50051"
    http_listen: str = "auto"
    data_dir: Path = Path("./data")
    mongodb_uri: str = ""
    mongodb_database: str = "memoryd"
    mongodb_write_concern: str = "majority"
    sqlite_synchronous: str = "NORMAL"
    log_level: str = "info"
    port_file: str = ""
    grace_seconds: float = 10.0
    event_retention_seconds: int = 7 * 24 * 3600
    event_retention_count: int = 1_000_000
    event_compaction_interval_seconds: float = 60.0
    watch_buffer_size: int = 1024
    watch_progress_interval_seconds: float = 10.0
    watch_poll_interval_seconds: float = 1.0
    watch_max_streams: int = 10_000
    mongodb_change_streams: str = "auto"
    health_check_interval_seconds: float = 2.0
    workers: int = 1
    metrics_port: int = 0
    tracing: bool = False
    tokens_file: str = ""
    tokens_file_create: bool = False
    tokens: str = field(default="", repr=False)  # MEMORYD_TOKENS only: never a flag (visible in ps)
    tls_cert: str = ""
    tls_key: str = ""
    tls_client_ca: str = ""
    health_tls_ca: str = ""
    health_tls_name: str = ""
    allow_insecure_remote: bool = False
    downgrade_images: bool = False
    entry_scope_capacity: int = 200
    # Vector memory (SPEC §5, docs/VECTORS.md).
    vectors_enabled: bool = True
    qdrant_url: str = ""
    qdrant_api_key: str = field(default="", repr=False)  # MEMORYD_QDRANT_API_KEY only
    qdrant_grpc_port: int = 6334
    qdrant_collection_prefix: str = "memoryd"
    qdrant_timeout_seconds: float = 5.0
    vector_threads: int = 2
    vector_build_threads: int = 1
    vector_rebuild_threshold_kb: int = 16_384
    embedder_url: str = ""
    embedder_model: str = ""
    embedder_model_id: str = ""
    embedder_api_key: str = field(default="", repr=False)  # MEMORYD_EMBEDDER_API_KEY only
    page_token_secret: str = field(default="", repr=False)  # MEMORYD_PAGE_TOKEN_SECRET only
    index_concurrency: int = 10
    index_queue_size: int = 500
    recall_half_life_hours: float = 168.0
    recall_control_kinds: str = "summary,compress-marker,directive,directive-reply"
    vector_outbox_poll_seconds: float = 5.0
    vector_outbox_max_backoff_seconds: float = 60.0
    limits: Limits = field(default_factory=Limits)

    @property
    def backend(self) -> str:
        return "mongodb" if self.mongodb_uri else "sqlite"

    @property
    def http_address(self) -> str:
        """Where HTTP/JSON is served ("" when off); `auto` follows --listen: same host, port + 1."""
        value = self.http_listen.strip()
        if value.lower() in ("", "off"):
            return ""
        if value.lower() != "auto":
            return value
        host, _, port = self.listen.rpartition(":")
        return f"{host}:{int(port) + 1 if int(port) else 0}"


# (name, env var, type, help). Limits fields are added from the Limits dataclass.
SETTINGS: list[tuple[str, str, type, str]] = [
    ("listen", "MEMORYD_LISTEN", str, "host:port to serve gRPC on (port 0 picks a free port)"),
    ("http_listen", "MEMORYD_HTTP_LISTEN", str, "host:port to serve HTTP/JSON (Connect) on; auto: --listen's host and port + 1 (port 0 stays 0); off: none"),
    ("data_dir", "MEMORYD_DATA_DIR", Path, "directory of the embedded SQLite file"),
    ("mongodb_uri", "MEMORYD_MONGODB_URI", str, "MongoDB URI; when set, MongoDB replaces SQLite"),
    ("mongodb_database", "MEMORYD_MONGODB_DATABASE", str, "MongoDB database name"),
    ("mongodb_write_concern", "MEMORYD_MONGODB_WRITE_CONCERN", str, "MongoDB write concern w (majority or a number)"),
    ("sqlite_synchronous", "MEMORYD_SQLITE_SYNCHRONOUS", str, "SQLite synchronous pragma (NORMAL or FULL)"),
    ("log_level", "MEMORYD_LOG_LEVEL", str, "debug, info, warning or error"),
    ("port_file", "MEMORYD_PORT_FILE", str, "write the bound port to this file once serving"),
    ("grace_seconds", "MEMORYD_GRACE_SECONDS", float, "shutdown grace period for in-flight calls"),
    ("event_retention_seconds", "MEMORYD_EVENT_RETENTION_SECONDS", int, "drop events older than this"),
    ("event_retention_count", "MEMORYD_EVENT_RETENTION_COUNT", int, "keep at most this many events per tenant"),
    ("event_compaction_interval_seconds", "MEMORYD_EVENT_COMPACTION_INTERVAL_SECONDS", float, "how often retention runs"),
    ("watch_buffer_size", "MEMORYD_WATCH_BUFFER_SIZE", int, "live events buffered per Watch stream; a stream that falls further behind catches up from the log"),
    ("watch_progress_interval_seconds", "MEMORYD_WATCH_PROGRESS_INTERVAL_SECONDS", float, "idle Watch streams get a progress message this often"),
    ("watch_max_streams", "MEMORYD_WATCH_MAX_STREAMS", int, "concurrent Watch streams per process; more are refused with RESOURCE_EXHAUSTED"),
    ("watch_poll_interval_seconds", "MEMORYD_WATCH_POLL_INTERVAL_SECONDS", float, "MongoDB without change streams: how often watchers re-read the log"),
    ("mongodb_change_streams", "MEMORYD_MONGODB_CHANGE_STREAMS", str, "auto (wake watchers from a change stream, else poll) or poll"),
    ("health_check_interval_seconds", "MEMORYD_HEALTH_CHECK_INTERVAL_SECONDS", float, "how often storage is probed for health"),
    ("workers", "MEMORYD_WORKERS", int, "server processes sharing the port (SO_REUSEPORT); >1 needs a Qdrant server"),
    ("metrics_port", "MEMORYD_METRICS_PORT", int, "serve Prometheus /metrics on this port (0: off; worker i uses port+i)"),
    ("tracing", "MEMORYD_TRACING", bool, "OpenTelemetry spans for every call (needs the memoryd[tracing] extra; export set by OTEL_* variables)"),
    ("tokens_file", "MEMORYD_TOKENS_FILE", str, "bearer tokens file ('tenant: token' lines or JSON); enables auth"),
    ("tokens_file_create", "MEMORYD_TOKENS_FILE_CREATE", bool, "create a missing --tokens-file with one random token for tenant default (unless MEMORYD_TOKENS is set)"),
    ("tls_cert", "MEMORYD_TLS_CERT", str, "PEM certificate chain; with --tls-key serves TLS"),
    ("tls_key", "MEMORYD_TLS_KEY", str, "PEM private key of --tls-cert"),
    ("tls_client_ca", "MEMORYD_TLS_CLIENT_CA", str, "PEM CA bundle; clients must present a certificate it signed (mTLS)"),
    ("health_tls_ca", "MEMORYD_HEALTH_TLS_CA", str, "`memoryd health`: PEM CA it trusts (default: --tls-client-ca, else --tls-cert)"),
    ("health_tls_name", "MEMORYD_HEALTH_TLS_NAME", str, "`memoryd health`: server name the certificate must carry (default: the loopback address)"),
    ("allow_insecure_remote", "MEMORYD_ALLOW_INSECURE_REMOTE", bool, "serve a non-loopback address without auth (logged as a warning)"),
    ("downgrade_images", "MEMORYD_DOWNGRADE_IMAGES", bool, "store image segments as [image <hash>] markers (seed 001)"),
    ("entry_scope_capacity", "MEMORYD_ENTRY_SCOPE_CAPACITY", int, "maximum long-term memory entries per scope"),
    ("vectors_enabled", "MEMORYD_VECTORS_ENABLED", bool, "serve VectorService and keep vectors in step with messages (default on)"),
    ("qdrant_url", "MEMORYD_QDRANT_URL", str, "Qdrant server URL (REST port); empty: Qdrant Edge in-process under <data-dir>/vectors"),
    ("qdrant_grpc_port", "MEMORYD_QDRANT_GRPC_PORT", int, "Qdrant gRPC port, preferred over REST; 0 uses REST only"),
    ("qdrant_collection_prefix", "MEMORYD_QDRANT_COLLECTION_PREFIX", str, "collections are <prefix>_d<dimension>"),
    ("qdrant_timeout_seconds", "MEMORYD_QDRANT_TIMEOUT_SECONDS", float, "bound of one Qdrant call without a caller deadline"),
    ("vector_threads", "MEMORYD_VECTOR_THREADS", int, "Qdrant Edge: threads running its calls (bounds how many run at once)"),
    ("vector_build_threads", "MEMORYD_VECTOR_BUILD_THREADS", int, "Qdrant Edge: threads of the background index builder process"),
    ("vector_rebuild_threshold_kb", "MEMORYD_VECTOR_REBUILD_THRESHOLD_KB", int, "Qdrant Edge: rebuild the index once this many KB of vectors are outside it"),
    ("embedder_url", "MEMORYD_EMBEDDER_URL", str, "OpenAI-compatible embeddings base URL (e.g. http://localhost:11434/v1); empty: no embedder"),
    ("embedder_model", "MEMORYD_EMBEDDER_MODEL", str, "embedding model name sent to the embedder"),
    ("embedder_model_id", "MEMORYD_EMBEDDER_MODEL_ID", str, "model id of the vectors it computes (default openai:<model>)"),
    ("index_concurrency", "MEMORYD_INDEX_CONCURRENCY", int, "background embedding jobs at once"),
    ("index_queue_size", "MEMORYD_INDEX_QUEUE_SIZE", int, "background indexing queue; when full the oldest job is dropped and counted"),
    ("recall_half_life_hours", "MEMORYD_RECALL_HALF_LIFE_HOURS", float, "SearchMemory recency half-life"),
    ("recall_control_kinds", "MEMORYD_RECALL_CONTROL_KINDS", str, "comma-separated kinds never shown as recall context"),
    ("vector_outbox_poll_seconds", "MEMORYD_VECTOR_OUTBOX_POLL_SECONDS", float, "how often the vector-delete outbox is checked"),
    ("vector_outbox_max_backoff_seconds", "MEMORYD_VECTOR_OUTBOX_MAX_BACKOFF_SECONDS", float, "longest wait between outbox retries while Qdrant is down"),
]

# Secrets are read from the environment only, never from flags (flags show up in ps).
SECRET_SETTINGS: list[tuple[str, str, str]] = [
    ("tokens", "MEMORYD_TOKENS", "bearer tokens inline, same format as the tokens file (commas may separate entries)"),
    ("qdrant_api_key", "MEMORYD_QDRANT_API_KEY", "API key of the Qdrant server"),
    ("embedder_api_key", "MEMORYD_EMBEDDER_API_KEY", "bearer key of the embeddings endpoint"),
    ("page_token_secret", "MEMORYD_PAGE_TOKEN_SECRET", "key that signs page tokens (default: one created once in the database)"),
]


def _bool(value: str) -> bool:
    text = value.strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("", "0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for name, env, kind, help_text in SETTINGS:
        if kind is bool:
            # `--flag` alone means true; `--flag false` (or 0/no/off) sets it false.
            parser.add_argument(
                _flag(name), dest=name, nargs="?", const=True, type=_bool, default=None, help=f"{help_text} [{env}]"
            )
            continue
        parser.add_argument(_flag(name), dest=name, type=kind, default=None, help=f"{help_text} [{env}]")
    for f in fields(Limits):
        env = "MEMORYD_" + f.name.upper()
        parser.add_argument(
            _flag(f.name), dest=f.name, type=int, default=None, help=f"limit: {f.metadata['help']} [{env}]"
        )


def load(args: argparse.Namespace | None = None, environ: dict[str, str] | None = None) -> Config:
    environ = dict(os.environ if environ is None else environ)
    values = vars(args) if args is not None else {}

    def pick(name: str, env: str, kind: type):
        if values.get(name) is not None:
            return values[name]
        if env in environ:
            return _bool(environ[env]) if kind is bool else kind(environ[env])
        return None

    settings = {}
    for name, env, kind, _ in SETTINGS:
        value = pick(name, env, kind)
        if value is not None:
            settings[name] = value
    for name, env, _ in SECRET_SETTINGS:
        if environ.get(env):
            settings[name] = environ[env]
    limits = {}
    for f in fields(Limits):
        value = pick(f.name, "MEMORYD_" + f.name.upper(), int)
        if value is not None:
            limits[f.name] = value
    return Config(**settings, limits=Limits(**limits))


def markdown_table() -> str:
    """The configuration table of README.md (scripts/config-table prints it; a test keeps README in step)."""
    defaults = Config()
    rows = ["| flag | environment | default | meaning |", "|---|---|---|---|"]
    for name, env, _, help_text in SETTINGS:
        default = getattr(defaults, name)
        rows.append(f"| `{_flag(name)}` | `{env}` | `{default}` | {help_text} |".replace("``", "(empty)"))
    for _, env, help_text in SECRET_SETTINGS:
        rows.append(f"| (environment only) | `{env}` | (empty) | {help_text} |")
    for f in fields(Limits):
        env = "MEMORYD_" + f.name.upper()
        rows.append(f"| `{_flag(f.name)}` | `{env}` | `{f.default}` | limit: {f.metadata['help']} |")
    return "\n".join(rows)
