"""Configuration: one frozen dataclass, loaded once at the entry point from flags and environment.

Each setting is declared once, as a field of Config or Limits with its default, help text
and bounds (`setting`); its flag (--name) and environment variable (MEMORYD_NAME) follow
from its name. A flag wins over the environment, the environment over the default;
secrets come from the environment only. A value outside its bounds, or a listen address
that is not host:port, is refused at startup (ValueError: the CLI logs it as JSON and
exits 2). docs/DEPLOYMENT.md's table is generated from the same fields (scripts/config-table).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import cast

from memoryd import addresses
from memoryd.domain import recall, retention
from memoryd.domain.limits import Limits, check_bounds, setting


@dataclass(frozen=True, slots=True)
class Config:
    listen: str = setting("127.0.0.1:50051", "host:port to serve gRPC on (port 0 picks a free port)")
    http_listen: str = setting(
        "auto",
        "host:port to serve HTTP/JSON (Connect) on; auto: --listen's host and port + 1 (port 0 stays 0); off: none",
    )
    http_read_timeout_seconds: float = setting(
        60.0,
        "HTTP/JSON: a request's headers and body must arrive within this long of its first byte (the first "
        'request\'s: of the connection), else the connection is closed (docs/HTTP.md, "Slow and stalled clients")',
        minimum=0.01,
    )
    http_max_connections: int = setting(
        0,
        "HTTP/JSON connections open at once per listener; past it a new connection closes the one waiting longest "
        "without a request being handled. 0: half the open-file limit, at most 10000",
        minimum=0,
    )
    console: bool = setting(
        True, "serve the web console at /console/ on the HTTP/JSON port (docs/CONSOLE.md); false: not served"
    )
    data_dir: Path = setting(Path("./data"), "directory of the embedded SQLite file")
    mongodb_uri: str = setting("", "MongoDB URI; when set, MongoDB replaces SQLite")
    mongodb_database: str = setting("memoryd", "MongoDB database name")
    mongodb_write_concern: str = setting("majority", "MongoDB write concern w (majority or a number)")
    sqlite_synchronous: str = setting("NORMAL", "SQLite synchronous pragma (NORMAL or FULL)")
    log_level: str = setting("info", "debug, info, warning or error")
    port_file: str = setting("", "write the bound port to this file once serving")
    grace_seconds: float = setting(10.0, "shutdown grace period for in-flight calls", minimum=0)
    event_retention_seconds: int = setting(7 * 24 * 3600, "drop events older than this", minimum=1)
    event_retention_count: int = setting(1_000_000, "keep at most this many events per tenant", minimum=1)
    event_compaction_interval_seconds: float = setting(60.0, "how often retention runs", minimum=0.001)
    session_retention_days: float = setting(
        0.0,
        "sessions nobody wrote to for longer than this many days are deleted (or archived) by a background task; "
        "0 keeps them; a session's label memoryd.retention-days overrides it (docs/OPERATIONS.md)",
        minimum=0,
    )
    session_retention_action: str = setting(
        "delete", "what session retention does: delete (the session whole, as ForgetUser) or archive (its messages)"
    )
    session_retention_tenants: str = setting(
        "", "per-tenant session retention, comma-separated tenant=days[:delete|:archive], in place of the two above"
    )
    session_retention_interval_seconds: float = setting(3600.0, "how often session retention sweeps", minimum=0.001)
    session_retention_batch: int = setting(
        100, "sessions session retention reads at a time (each expired in its own transaction)", minimum=1
    )
    watch_buffer_size: int = setting(
        1024,
        "live events buffered per Watch stream; a stream that falls further behind catches up from the log",
        minimum=1,
    )
    watch_progress_interval_seconds: float = setting(
        10.0,
        "idle Watch streams get a progress message this often",
        minimum=0.001,
    )
    watch_poll_interval_seconds: float = setting(
        1.0,
        "MongoDB without change streams: how often watchers re-read the log",
        minimum=0.001,
    )
    watch_max_streams: int = setting(
        10_000,
        "concurrent Watch streams per process; more are refused with RESOURCE_EXHAUSTED",
        minimum=1,
    )
    mongodb_change_streams: str = setting("auto", "auto (wake watchers from a change stream, else poll) or poll")
    health_check_interval_seconds: float = setting(2.0, "how often storage is probed for health", minimum=0.001)
    workers: int = setting(
        1,
        "server processes sharing the port (SO_REUSEPORT); on the embedded default they share one vector engine "
        "process (docs/OPERATIONS.md)",
        minimum=1,
    )
    metrics_port: int = setting(
        0,
        "serve Prometheus /metrics on this port (0: off; worker i uses port+i)",
        minimum=0,
        maximum=65535,
    )
    tracing: bool = setting(
        False,
        "OpenTelemetry spans for every call (needs the tracing extra: `.venv/bin/pip install -e '.[tracing]'` in a "
        "checkout; export set by OTEL_* variables)",
    )
    tokens_file: str = setting("", "bearer tokens file ('tenant: token' lines or JSON); enables auth")
    tokens_file_create: bool = setting(
        False,
        "create a missing --tokens-file with one random token for tenant default (unless MEMORYD_TOKENS is set)",
    )
    tokens: str = setting(
        "",
        "bearer tokens inline, same format as the tokens file (commas may separate entries)",
        secret=True,
    )
    tokens_reload_seconds: float = setting(
        1.0,
        "how often --tokens-file (and --jwks-file) is checked for changes, re-read without a restart "
        "(SIGHUP re-reads at once); streams of a removed token end with UNAUTHENTICATED",
        minimum=0.01,
    )
    oidc_issuer: str = setting(
        "",
        "OIDC issuer URL: JWT bearer tokens must carry it as iss; its discovery document names the keys (JWKS)",
    )
    jwt_audience: str = setting("", "the aud a JWT must name (needed with --oidc-issuer)")
    jwks_file: str = setting("", "static JWKS file to verify JWTs with instead of the issuer's (air-gapped)")
    jwt_tenant_claim: str = setting("tenant", "JWT claim naming the caller's tenant (a token without it is refused)")
    jwt_user_claim: str = setting(
        "", "JWT claim binding a token to one end user (e.g. sub); tokens without it are not bound (empty: none is)"
    )
    jwt_leeway_seconds: float = setting(30.0, "clock skew allowed on a JWT's exp and nbf", minimum=0, maximum=300)
    jwks_refresh_seconds: float = setting(
        60.0,
        "the issuer's keys (or --jwks-file) are re-read this often, asked or not: a key removed there is refused, "
        "and its tokens' streams end, at most this long (plus one read) after",
        minimum=1,
        maximum=3600,
    )
    jwks_min_interval_seconds: float = setting(
        5.0,
        "a JWT with an unknown kid re-reads the keys at once, at most once per this many seconds",
        minimum=0.1,
        maximum=300,
    )
    jwks_timeout_seconds: float = setting(5.0, "bound of one read of the issuer's keys", minimum=0.1, maximum=60)
    user_entry_scope: str = setting(
        "{user}", "the memory-entry scope of a token bound to end user {user} (e.g. f:{user})"
    )
    tls_cert: str = setting("", "PEM certificate chain; with --tls-key serves TLS")
    tls_key: str = setting("", "PEM private key of --tls-cert")
    tls_client_ca: str = setting("", "PEM CA bundle; clients must present a certificate it signed (mTLS)")
    health_tls_ca: str = setting("", "`memoryd health`: PEM CA it trusts (default: --tls-client-ca, else --tls-cert)")
    health_tls_name: str = setting(
        "",
        "`memoryd health`: server name the certificate must carry (default: the loopback address)",
    )
    allow_insecure_remote: bool = setting(False, "serve a non-loopback address without auth (logged as a warning)")
    downgrade_images: bool = setting(False, "store image segments as [image <hash>] markers (docs/CONTEXT.md)")
    entry_scope_capacity: int = setting(200, "maximum long-term memory entries per scope", minimum=1)
    # Vector recall (docs/VECTORS.md).
    vectors_enabled: bool = setting(True, "serve VectorService and keep vectors in step with messages (default on)")
    qdrant_url: str = setting(
        "",
        "Qdrant server URL (REST port); several, comma-separated: nodes of one cluster (one --qdrant-grpc-port "
        "for all), the next one used after a failed call; empty: Qdrant Edge under <data-dir>/vectors",
    )
    qdrant_api_key: str = setting("", "API key of the Qdrant server", secret=True)
    qdrant_grpc_port: int = setting(
        6334,
        "Qdrant gRPC port, preferred over REST; 0 uses REST only",
        minimum=0,
        maximum=65535,
    )
    qdrant_collection_prefix: str = setting("memoryd", "collections are <prefix>_d<dimension>")
    qdrant_timeout_seconds: float = setting(5.0, "bound of one Qdrant call without a caller deadline", minimum=0.001)
    qdrant_shards: int = setting(
        0,
        "shards of each collection memoryd creates on a Qdrant server (a cluster spreads them over its nodes); "
        "0: the server's default (one per node at creation; docs/SCALING.md)",
        minimum=0,
    )
    qdrant_replication_factor: int = setting(
        0,
        "copies of each shard on a Qdrant cluster, on different nodes (2: a node can be lost); "
        "0: the server's default (1)",
        minimum=0,
    )
    qdrant_write_consistency: int = setting(
        0,
        "copies of a shard that must apply a write before it is acknowledged (at most the replication factor); "
        "0: the server's default (1)",
        minimum=0,
    )
    vector_engine_process: bool = setting(
        True,
        "Qdrant Edge: run the engine in a child process (its calls hold the GIL: in the server process each "
        "one would stall every other call; docs/VECTORS.md)",
    )
    vector_threads: int = setting(2, "Qdrant Edge: threads running its calls (bounds how many run at once)", minimum=1)
    vector_build_threads: int = setting(1, "Qdrant Edge: threads of the background index builder process", minimum=1)
    vector_rebuild_threshold_kb: int = setting(
        16_384,
        "Qdrant Edge: rebuild the index once this many KB of vectors are outside it",
        minimum=1,
    )
    vector_erase_seconds: float = setting(
        60.0,
        "Qdrant Edge: after a delete (ForgetUser, retention, clears), wait this long, then rewrite the "
        "shard pair from its live points so no file keeps the deleted text (docs/OPERATIONS.md, Erasure)",
        minimum=0.0,
    )
    vector_min_free_mb: int = setting(
        128,
        "Qdrant Edge: free space (MB) its disk must keep; below it vector writes answer RESOURCE_EXHAUSTED "
        "(STORAGE_FULL) and vector health is NOT_SERVING instead of the engine dying on a full disk; 0: no check",
        minimum=0,
    )
    embedder_url: str = setting(
        "",
        "OpenAI-compatible embeddings base URL (e.g. http://localhost:11434/v1); empty: no embedder",
    )
    embedder_model: str = setting("", "embedding model name sent to the embedder")
    embedder_model_id: str = setting("", "model id of the vectors it computes (default openai:<model>)")
    embedder_api_key: str = setting("", "bearer key of the embeddings endpoint", secret=True)
    llm_url: str = setting(
        "",
        "memory formation (docs/MEMORY.md): OpenAI-compatible chat-completions base URL (e.g. "
        "http://localhost:8080/v1); empty: formation off",
    )
    llm_model: str = setting("", "memory formation: model name sent to --llm-url")
    llm_api_key: str = setting("", "memory formation: bearer key of --llm-url", secret=True)
    llm_api_key_file: str = setting("", "memory formation: file holding the bearer key of --llm-url")
    llm_timeout_seconds: float = setting(
        120.0, "memory formation: longest model call (a slower one is retried later)", minimum=0.1
    )
    formation_concurrency: int = setting(2, "memory formation: model calls at once per tenant", minimum=1, maximum=64)
    formation_token_budget: int = setting(
        0, "memory formation: tokens a tenant may spend per hour (prompt + completion); 0: no budget", minimum=0
    )
    formation_summary_max_messages: int = setting(
        50,
        "memory formation: summarize a session's tail at this many messages (tenants may lower it)",
        minimum=1,
        maximum=50,
    )
    formation_summary_max_chars: int = setting(
        20_000, "memory formation: summarize a session's tail at this many characters", minimum=100
    )
    formation_summary_idle_seconds: int = setting(
        1800, "memory formation: summarize a tail of two or more messages idle this long; 0: never", minimum=0
    )
    formation_profile_max_chars: int = setting(
        2000, "memory formation: longest user profile document", minimum=100, maximum=8000
    )
    page_token_secret: str = setting(
        "",
        "key that signs page tokens (default: one created once in the database)",
        secret=True,
    )
    index_message_keywords: bool = setting(
        True,
        "give saved user/assistant messages keyword (BM25) points, so a text SearchMemory needs no embedder "
        "(off: only UpsertVectors texts; docs/VECTORS.md)",
    )
    index_sync_batch: int = setting(
        500, "events of a tenant's log the index synchronizer applies at once (docs/VECTORS.md)", minimum=1
    )
    recall_half_life_hours: float = setting(
        2160.0, "SearchMemory recency half-life (docs/RECALL.md)", minimum=0.001, maximum=87_600
    )
    recall_time_weight: float = setting(
        recall.DEFAULT_TIME_WEIGHT, "SearchMemory default weight of recency, 0 to 1", minimum=0, maximum=1
    )
    recall_keyword_weight: float = setting(
        recall.DEFAULT_KEYWORD_WEIGHT,
        "SearchMemory / SearchEntries default weight of keywords against meaning, 0 to 1",
        minimum=0,
        maximum=1,
    )
    recall_fusion: str = setting("relative", "hybrid fusion: relative (min-max scores) or rrf (reciprocal ranks)")
    recall_neighbor_weight: float = setting(
        recall.DEFAULT_NEIGHBOR_WEIGHT,
        "SearchMemory default weight of a candidate's adjacent candidate in its session, 0 to 1 (docs/RECALL.md)",
        minimum=0,
        maximum=1,
    )
    recall_control_kinds: str = setting(
        "summary,compress-marker,directive,directive-reply",
        "comma-separated kinds never shown as recall context",
    )
    vector_sync_poll_seconds: float = setting(
        1.0, "how often the index synchronizer reads the logs without a local write (other replicas')", minimum=0.001
    )
    vector_sync_max_backoff_seconds: float = setting(
        30.0,
        "longest wait between index synchronizer retries while the vector store or the embedder is down",
        minimum=0.001,
    )
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        check_bounds(self)
        if "{user}" not in self.user_entry_scope:
            raise ValueError("user_entry_scope must contain {user}")
        _ = self.retention  # a malformed policy stops the start (ValueError)
        addresses.split(self.listen)
        if self.http_address:
            addresses.split(self.http_address)
        if self.llm_url and not self.llm_model:
            raise ValueError("--llm-url needs --llm-model (the model name the endpoint serves; docs/MEMORY.md)")
        if self.llm_api_key_file and not os.access(self.llm_api_key_file, os.R_OK):
            raise ValueError(f"--llm-api-key-file {self.llm_api_key_file}: not a readable file")
        if 0 < self.qdrant_replication_factor < self.qdrant_write_consistency:
            raise ValueError("--qdrant-write-consistency cannot exceed --qdrant-replication-factor")

    @property
    def retention(self) -> retention.Settings:
        """The session retention policies (domain/retention.py) of the three settings."""
        return retention.settings(
            self.session_retention_days, self.session_retention_action, self.session_retention_tenants
        )

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
        host, port = addresses.split(self.listen)
        return addresses.join(host, port + 1 if port else 0)


def _bool(value: str) -> bool:
    text = value.strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("", "0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _env(name: str) -> str:
    return "MEMORYD_" + name.upper()


def _kind(value: object) -> type:
    return Path if isinstance(value, Path) else type(value)


def _settings() -> list[tuple[str, type, str, bool]]:
    """(name, type, help, secret) of every Config setting; the limits come after (`limits`)."""
    return [
        (f.name, _kind(f.default), f.metadata["help"], f.metadata["secret"])
        for f in fields(Config)
        if f.name != "limits"
    ]


def _limits() -> list[tuple[str, str, int]]:
    return [(f.name, f"limit: {f.metadata['help']}", cast(int, f.default)) for f in fields(Limits)]


SETTINGS_TITLE = "memoryd settings"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The settings' flags, in their own group (SETTINGS_TITLE): a command's own options are
    listed before them in its --help (memoryd.cli)."""
    group = parser.add_argument_group(
        SETTINGS_TITLE,
        "the server's configuration, as `memoryd serve` takes it (each also from its MEMORYD_* variable)",
    )
    for name, kind, help_text, secret in _settings():
        if secret:  # flags show up in ps
            continue
        if kind is bool:
            # `--flag` alone means true; `--flag false` (or 0/no/off) sets it false.
            group.add_argument(
                _flag(name),
                dest=name,
                nargs="?",
                const=True,
                type=_bool,
                default=None,
                help=f"{help_text} [{_env(name)}]",
            )
            continue
        group.add_argument(_flag(name), dest=name, type=kind, default=None, help=f"{help_text} [{_env(name)}]")
    for name, help_text, _ in _limits():
        group.add_argument(_flag(name), dest=name, type=int, default=None, help=f"{help_text} [{_env(name)}]")


def load(args: argparse.Namespace | None = None, environ: dict[str, str] | None = None) -> Config:
    """Config from flags and environment; ValueError names a malformed or out-of-bounds setting."""
    environ = dict(os.environ if environ is None else environ)
    values = vars(args) if args is not None else {}

    def pick(name: str, kind: type, *, secret: bool = False):
        if not secret and values.get(name) is not None:
            return values[name]
        text = environ.get(_env(name))
        if text is None or (secret and not text):
            return None
        try:
            return _bool(text) if kind is bool else kind(text)
        except ValueError:
            raise ValueError(f"{_env(name)}={text!r} is not a {kind.__name__}") from None

    settings = {}
    for name, kind, _, secret in _settings():
        value = pick(name, kind, secret=secret)
        if value is not None:
            settings[name] = value
    limits = {}
    for name, _, _ in _limits():
        value = pick(name, int)
        if value is not None:
            limits[name] = value
    return Config(**settings, limits=Limits(**limits))


def markdown_table() -> str:
    """The configuration table of docs/DEPLOYMENT.md (scripts/config-table prints it; a test keeps it in step)."""
    defaults = Config()
    rows = ["| flag | environment | default | meaning |", "|---|---|---|---|"]
    for name, _, help_text, secret in _settings():
        if not secret:
            rows.append(
                f"| `{_flag(name)}` | `{_env(name)}` | `{getattr(defaults, name)}` | {help_text} |".replace(
                    "``", "(empty)"
                )
            )
    for name, _, help_text, secret in _settings():
        if secret:
            rows.append(f"| (environment only) | `{_env(name)}` | (empty) | {help_text} |")
    for name, help_text, default in _limits():
        rows.append(f"| `{_flag(name)}` | `{_env(name)}` | `{default}` | {help_text} |")
    return "\n".join(rows)
