"""Assembles a memoryd server: storage adapter → domain → servicers on a grpc.aio server."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import grpc
import structlog
from google.protobuf.descriptor import ServiceDescriptor
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from memoryd import addresses, shutdown
from memoryd.config import Config
from memoryd.consumers.remote import RuntimeLink
from memoryd.domain import recall
from memoryd.domain.entries import Entries
from memoryd.domain.errors import MemorydError, StorageFull, StorageUnavailable
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.memory import Memory
from memoryd.domain.models import SYSTEM_TENANT, now_ms
from memoryd.domain.paging import PageTokens
from memoryd.domain.retention import Retention
from memoryd.domain.store import Store
from memoryd.domain.summaries import SearchRecaller, Summaries
from memoryd.domain.watch import WatchHub
from memoryd.formation import engine as formation
from memoryd.transport import tls
from memoryd.transport.access import Gate, access_table
from memoryd.transport.auth import Authenticator, check_bind
from memoryd.transport.http.server import HttpServer
from memoryd.transport.oidc import JwtSettings, JwtVerifier
from memoryd.transport.reflection import enable_reflection
from memoryd.transport.rpc import GenericOnly, InflightBytes, add_service
from memoryd.transport.servicers.entries import EntryServicer
from memoryd.transport.servicers.events import EventServicer
from memoryd.transport.servicers.formation import FormationServicer
from memoryd.transport.servicers.memory import MemoryServicer, RetentionInEffect
from memoryd.transport.servicers.metadata import MetadataServicer
from memoryd.transport.servicers.summaries import SummaryServicer
from memoryd.transport.servicers.vectors import VectorServicer
from memoryd.transport.tokens import FileWatch, TokenSource, prepare_tokens_file
from memoryd.v1 import (
    entry_service_pb2,
    event_service_pb2,
    formation_service_pb2,
    memory_service_pb2,
    metadata_service_pb2,
    summary_service_pb2,
    vector_service_pb2,
)
from memoryd.vectors.recall import VectorRecall
from memoryd.vectors.setup import build_vectors, engine_synchronizes, recall_defaults

if TYPE_CHECKING:
    from memoryd.storage.mongo.store import MongoStore

T = TypeVar("T")

log = structlog.get_logger("memoryd.app")


@dataclass
class Parts:
    """What a configuration builds before anything listens: storage, domain, the servicers."""

    config: Config
    store: Store
    storage_ready: bool
    auth: Gate  # authentication, scopes and user confinement of every call
    credentials: grpc.ServerCredentials | None
    memory: Memory
    hub: WatchHub
    vectors: VectorRecall | None
    page_tokens: PageTokens
    servicers: dict[str, Any] = field(default_factory=dict)  # full service name -> servicer
    formation: formation.Formation | None = None  # memory formation (docs/MEMORY.md); off without --llm-url


@dataclass(frozen=True)
class Service:
    """One row of the service table: the contract's service and how its servicer is made."""

    descriptor: ServiceDescriptor
    servicer: Callable[[Parts], Any]
    needs_vectors: bool = False

    @property
    def name(self) -> str:
        return self.descriptor.full_name


def _service(module, name: str) -> ServiceDescriptor:
    return module.DESCRIPTOR.services_by_name[name]


def _present(part: T | None) -> T:
    """A part that a service marked as needing it is only built with (Service.needs_*)."""
    assert part is not None
    return part


# Every service memoryd serves, over gRPC and HTTP alike. Adding an RPC to an existing
# service needs no change here; a new service is one row (docs/ARCHITECTURE.md).
SERVICES: tuple[Service, ...] = (
    Service(
        _service(memory_service_pb2, "MemoryService"),
        lambda p: MemoryServicer(
            p.memory,
            p.auth,
            RetentionInEffect(p.config.retention, p.config.event_retention_seconds, p.config.event_retention_count),
        ),
    ),
    Service(_service(metadata_service_pb2, "MetadataService"), lambda p: MetadataServicer(p.memory, p.auth)),
    Service(
        _service(event_service_pb2, "EventService"), lambda p: EventServicer(p.store, p.hub, p.config.limits, p.auth)
    ),
    Service(
        _service(vector_service_pb2, "VectorService"),
        lambda p: VectorServicer(_present(p.vectors), p.auth, p.config.limits),
        needs_vectors=True,
    ),
    Service(
        _service(summary_service_pb2, "SummaryService"),
        lambda p: SummaryServicer(
            Summaries(
                p.store,
                p.config.limits,
                SearchRecaller(p.vectors) if p.vectors else None,
                p.page_tokens,
                p.vectors.slices if p.vectors else None,
                p.vectors.defaults if p.vectors else recall.RecallDefaults(),
            ),
            p.auth,
            profiles=p.formation,
        ),
    ),
    Service(
        _service(entry_service_pb2, "EntryService"),
        lambda p: EntryServicer(
            Entries(
                p.store,
                p.config.limits,
                p.config.entry_scope_capacity,
                p.vectors.embedder if p.vectors else None,
                p.page_tokens,
                recall_defaults(p.config),
            ),
            p.auth,
        ),
    ),
)
SERVICES += (
    Service(
        _service(formation_service_pb2, "FormationService"),
        lambda p: FormationServicer(_present(p.formation), p.auth, p.page_tokens, p.config.limits),
    ),
)
SERVICE_NAMES = tuple(service.name for service in SERVICES)
HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name


def open_store(config: Config) -> Store:
    if config.mongodb_uri:
        from memoryd.storage.mongo.store import MongoStore

        return MongoStore(config.mongodb_uri, config.mongodb_database, write_concern=config.mongodb_write_concern)
    from memoryd.storage.sqlite import reserve
    from memoryd.storage.sqlite.store import SqliteStore

    return SqliteStore(
        Path(config.data_dir) / "memoryd.db", synchronous=config.sqlite_synchronous, reserve_bytes=reserve.RESERVE_BYTES
    )


@dataclass
class App:
    """A running server and the background tasks that keep it healthy."""

    config: Config
    store: Store
    server: grpc.aio.Server
    health: health.aio.HealthServicer
    port: int
    tasks: list[asyncio.Task] = field(default_factory=list)
    http: HttpServer | None = None
    hub: WatchHub | None = None
    vectors: VectorRecall | None = None
    storage_ready: bool = True
    authenticator: Authenticator = field(default_factory=Authenticator)
    # The vector side answers only once its engine has opened the index (the last engine
    # process may still hold the folder for a moment after a restart): the vector health
    # task sets it.
    vectors_ready: bool = False
    formation: formation.Formation | None = None

    def reload_credentials(self) -> None:
        """Re-read the tokens file and a static JWKS file now (SIGHUP), changed or not."""
        self.authenticator.reload(force=True)
        if self.authenticator.jwt is not None and self.config.jwks_file:
            asyncio.get_running_loop().create_task(self.authenticator.jwt.keys.refresh(), name="jwks-reload")

    @property
    def http_port(self) -> int:
        """The bound HTTP/JSON port (0 when HTTP is off)."""
        return self.http.port if self.http is not None else 0

    async def stop(self, grace: float | None = None) -> list[str]:
        """Stop serving: calls in flight get `grace` seconds, every other step a bounded
        time of its own (memoryd.shutdown). Returns the steps it had to abandon."""
        grace = self.config.grace_seconds if grace is None else grace
        log.info("shutting_down", grace_seconds=grace)
        steps = shutdown.Steps()
        await steps.run("health", self.health.enter_graceful_shutdown())
        if self.hub is not None:
            self.hub.close()  # Watch streams end cleanly with a last progress; clients resume elsewhere
        # gRPC cancels the calls still running after `grace`; a handler that ignores the
        # cancellation would hold its stop open for good.
        listeners = [steps.run("grpc_server", self.server.stop(grace), grace + shutdown.STEP_SECONDS)]
        if self.http is not None:
            listeners.append(steps.run("http_server", self.http.stop(grace), grace + shutdown.STEP_SECONDS))
        await asyncio.gather(*listeners)
        await steps.cancel("background_tasks", self.tasks)
        if self.vectors is not None:
            # Bounded, but long enough for the engine process to have let go of its folder.
            await steps.run("vectors", self.vectors.close(), shutdown.ENGINE_STOP_SECONDS + shutdown.STEP_SECONDS)
        await steps.run("storage", self.store.close())
        log.info("stopped", abandoned=steps.abandoned)
        return steps.abandoned


VECTOR_SERVICE = _service(vector_service_pb2, "VectorService").full_name


def _status(serving: bool) -> int:
    return health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING


async def _set_serving(health_servicer: health.aio.HealthServicer, serving: bool, *, vectors_ready: bool) -> None:
    """Every service follows the message store; VectorService also needs its index open."""
    for name in ("", *SERVICE_NAMES):
        vector_side = name == VECTOR_SERVICE
        await health_servicer.set(name, _status(serving and (vectors_ready or not vector_side)))


async def _open_and_ping(store: Store) -> None:
    await store.open()
    await store.ping()


async def _watch_storage_health(app: App) -> None:
    """Probe storage; flip health to NOT_SERVING while it is down and back when it returns."""
    while True:
        shutdown.raise_if_cancelled()
        try:
            # open() is idempotent: it connects a store that was down at startup.
            async with asyncio.timeout(max(app.config.health_check_interval_seconds, 1.0)):
                await _open_and_ping(app.store)
            healthy = True
        except (MemorydError, TimeoutError, OSError):
            healthy = False
        if healthy != app.storage_ready:
            app.storage_ready = healthy
            log.warning("storage_health_changed", serving=healthy)
            await _set_serving(app.health, healthy, vectors_ready=app.vectors_ready)
        await asyncio.sleep(app.config.health_check_interval_seconds)


def auth_mode(authenticator: Authenticator) -> str:
    """How callers authenticate, for the `serving` log line."""
    modes = [
        name for name, on in (("tokens", bool(authenticator.tenants)), ("jwt", authenticator.jwt is not None)) if on
    ]
    return "+".join(modes) or "none"


async def _reload_credentials(app: App) -> None:
    """Rotation without a restart: re-read the tokens file, and a static JWKS file, when they change."""
    authenticator = app.authenticator
    jwks = authenticator.jwt
    jwks_file = FileWatch(app.config.jwks_file) if jwks is not None and app.config.jwks_file else None
    while True:
        shutdown.raise_if_cancelled()
        await asyncio.sleep(app.config.tokens_reload_seconds)
        authenticator.reload()
        if jwks is not None and jwks_file is not None and jwks_file.changed():
            await jwks.keys.refresh()


async def _compact_events(app: App) -> None:
    config = app.config
    while True:
        shutdown.raise_if_cancelled()
        await asyncio.sleep(config.event_compaction_interval_seconds)
        try:
            removed = await app.store.compact_events(
                older_than=now_ms() - config.event_retention_seconds * 1000, keep_last=config.event_retention_count
            )
            if removed:
                log.info("events_compacted", removed=removed)
        except MemorydError as error:
            log.warning("event_compaction_failed", reason=error.reason)


async def _sweep_retention(app: App) -> None:
    """Session retention (domain/retention.py), every session_retention_interval_seconds."""
    config = app.config
    sweeper = Retention(
        app.store, app.vectors or MessageHooks(), config.retention, batch=config.session_retention_batch
    )
    while True:
        shutdown.raise_if_cancelled()
        await asyncio.sleep(config.session_retention_interval_seconds)
        try:
            tenants = [tenant for tenant in await app.store.event_tenants() if tenant != SYSTEM_TENANT]
            swept = await sweeper.sweep_all(tenants)
            if swept.deleted or swept.archived or swept.skipped:
                log.info(
                    "sessions_expired",
                    deleted=swept.deleted,
                    archived=swept.archived,
                    messages=swept.messages,
                    written_meanwhile=swept.skipped,
                )
        except MemorydError as error:
            log.warning("session_retention_failed", reason=error.reason)


PENDING_CALLS_HEADROOM = 10_000
GIL_SWITCH_INTERVAL_SECONDS = 0.0005


def server_options(config: Config, *, reuse_port: bool = False) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", config.limits.max_request_bytes),
        # grpcio turns SO_REUSEPORT on by default: a second server on the same port
        # would bind silently. Only multi-worker serving wants it.
        ("grpc.so_reuseport", 1 if reuse_port else 0),
        # grpc.aio takes new calls from gRPC one per event-loop turn; the rest wait in
        # gRPC's queue of unrequested calls, whose default bound (1,000, then random drops
        # up to 3,000) cancels a burst of new streams (subscribers reconnecting after a
        # deploy) before any handler runs. Room for every Watch stream we accept, and more.
        ("grpc.server.max_pending_requests", config.watch_max_streams + PENDING_CALLS_HEADROOM),
        ("grpc.server.max_pending_requests_hard_limit", config.watch_max_streams + PENDING_CALLS_HEADROOM),
    ]


GRPC_LISTENER = "gRPC (--listen)"
HTTP_LISTENER = "HTTP/JSON (--http-listen)"


def bind_failure(listen: str) -> str:
    """Why gRPC could not bind `listen` (it says only that it failed): the port is in use,
    the address is not this host's, or the address does not parse."""
    try:
        host, port = addresses.bind_host(listen), addresses.split(listen)[1]
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, port))
    except ValueError:
        return f"{GRPC_LISTENER} cannot listen on {listen}: not a host:port address"
    except OSError as error:
        return str(addresses.bind_error(GRPC_LISTENER, listen, error))
    return f"{GRPC_LISTENER} cannot listen on {listen}"


def jwt_verifier(config: Config) -> JwtVerifier | None:
    """The JWT verifier --oidc-issuer asks for (OidcConfigError, a ValueError, on partial settings)."""
    if not config.oidc_issuer:
        if config.jwt_audience or config.jwks_file:
            raise ValueError("--jwt-audience and --jwks-file need --oidc-issuer (the iss JWTs carry)")
        return None
    return JwtVerifier(
        JwtSettings(
            issuer=config.oidc_issuer,
            audience=config.jwt_audience,
            jwks_file=config.jwks_file,
            tenant_claim=config.jwt_tenant_claim,
            user_claim=config.jwt_user_claim,
            leeway_seconds=config.jwt_leeway_seconds,
            refresh_seconds=config.jwks_refresh_seconds,
            min_interval_seconds=config.jwks_min_interval_seconds,
            timeout_seconds=config.jwks_timeout_seconds,
        )
    )


def security(config: Config, *, warn: bool = True) -> tuple[Authenticator, grpc.ServerCredentials | None]:
    """Tokens, JWT settings and TLS from config; refuses an unauthenticated non-loopback listen address.

    Raises ValueError (TokenConfigError, OidcConfigError, TlsConfigError, InsecureBindRefused) on bad settings.
    """
    tokens_file = prepare_tokens_file(config.tokens_file, config.tokens, create=config.tokens_file_create)
    source = TokenSource(tokens_file, config.tokens)
    auth = Authenticator(source.load(), jwt_verifier(config), source)
    credentials = tls.server_credentials(config.tls_cert, config.tls_key, config.tls_client_ca)
    for address in (config.listen, config.http_address):  # the same rule for gRPC and HTTP
        if address:
            check_bind(
                address,
                authenticated=auth.enabled or bool(config.tls_client_ca),
                allow_insecure_remote=config.allow_insecure_remote,
                warn=warn,
            )
    return auth, credentials


async def _start_http(
    config: Config, servicers: dict, health_servicer: health.aio.HealthServicer, *, reuse_port: bool
) -> HttpServer:
    """Bind and serve the HTTP/JSON listener; raises OSError when the address cannot be bound."""
    from memoryd.transport.http.server import bind
    from memoryd.transport.http.site import build

    address = config.http_address
    if reuse_port and addresses.split(address)[1] == 0:
        raise OSError("--workers needs a fixed HTTP port (--http-listen host:port, or auto with a fixed --listen port)")
    app = build(
        servicers, config.limits, health_servicer, metrics=bool(config.metrics_port), tracing=config.tracing,
        console=config.console,
    )  # fmt: skip
    sock = bind(address, reuse_port=reuse_port)
    http = HttpServer(
        app, sock, tls_cert=config.tls_cert, tls_key=config.tls_key, tls_client_ca=config.tls_client_ca,
        read_timeout_seconds=config.http_read_timeout_seconds, connection_limit=config.http_max_connections,
    )  # fmt: skip
    await http.start()
    return http


async def build(config: Config) -> Parts:
    """Storage, domain and servicers for `config`; nothing listens yet. A store that does not
    answer is no failure: the server serves anyway (calls answer UNAVAILABLE, health says
    NOT_SERVING) and the storage health task keeps opening it until it answers.

    Raises ValueError (from `security`) on bad tokens, TLS or listen settings.
    """
    authenticator, credentials = security(config)
    table = access_table(service.descriptor for service in SERVICES)  # UnclassifiedMethod: an RPC without its scope
    store = open_store(config)
    try:
        await store.open()
        storage_ready = True
    except (StorageUnavailable, StorageFull) as error:  # a full disk too: reads may still work later
        log.warning("storage_unavailable_at_startup", reason=error.reason)
        storage_ready = False
    vectors = build_vectors(config, store) if config.vectors_enabled else None
    if vectors is not None:
        await vectors.open()
    page_tokens = PageTokens.for_store(store, config.page_token_secret)
    memory = Memory(
        store, config.limits, vectors, downgrade_images=config.downgrade_images, page_tokens=page_tokens,
        user_entry_scope=config.user_entry_scope,
    )  # fmt: skip
    hub = WatchHub(
        store,
        buffer_size=config.watch_buffer_size,
        progress_interval=config.watch_progress_interval_seconds,
        max_streams=config.watch_max_streams,
    )
    if authenticator.jwt is not None:
        await authenticator.jwt.keys.refresh()  # a failure is logged; JWTs answer UNAVAILABLE until a read succeeds
    auth = Gate(authenticator, store, config.limits, table, user_entry_scope=config.user_entry_scope)
    parts = Parts(config, store, storage_ready, auth, credentials, memory, hub, vectors, page_tokens)
    # On the embedded default the engine process runs formation's consumers (memoryd/engine.py):
    # this process follows their positions over the engine socket.
    link = cast(RuntimeLink, vectors.index) if vectors is not None and engine_synchronizes(config) else None
    parts.formation = formation.build(config, store, config.limits, link=link)
    for service in SERVICES:
        if vectors is not None or not service.needs_vectors:
            parts.servicers[service.name] = service.servicer(parts)
    return parts


def _grpc_server(parts: Parts, health_servicer: health.aio.HealthServicer, *, reuse_port: bool, worker_index: int):
    """The grpc.aio server with every servicer of `parts`, health and reflection registered."""
    config = parts.config
    interceptors = []
    if config.tracing:
        from memoryd.observability import tracing

        interceptors.extend(tracing.grpc_interceptors())
    if config.metrics_port:
        from memoryd.observability import metrics

        metrics.instrument_store(parts.store)
        interceptors.append(metrics.MetricsInterceptor())
        host, port = addresses.bind_host(config.listen), config.metrics_port + worker_index
        try:
            metrics_port = metrics.start_metrics_server(port, host)
        except OSError as error:
            listener = f"metrics (--metrics-port {config.metrics_port}" + (
                f", worker {worker_index})" if worker_index else ")"
            )
            raise addresses.bind_error(listener, addresses.join(host, port), error) from None
        log.info("metrics_serving", port=metrics_port)
    server = grpc.aio.server(options=server_options(config, reuse_port=reuse_port), interceptors=interceptors)
    inflight = InflightBytes(config.limits.max_inflight_request_bytes)
    descriptors = {service.name: service.descriptor for service in SERVICES}
    for name, servicer in parts.servicers.items():
        add_service(server, servicer, descriptors[name], inflight)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, cast(grpc.aio.Server, GenericOnly(server)))
    enable_reflection((*parts.servicers, HEALTH_SERVICE), server)
    return server


def _background_tasks(app: App) -> list[asyncio.Task]:
    """What keeps a running server healthy: storage and vector health, event compaction, the
    index synchronizer, and the tail of other processes' commits (MongoDB, or SQLite workers)."""
    config, store, vectors = app.config, app.store, app.vectors
    tasks = []
    if vectors is not None:
        tasks.append(asyncio.create_task(vectors.background(), name="vector-sync"))

        async def report_vectors(ok: bool) -> None:
            app.vectors_ready = ok
            await app.health.set(VECTOR_SERVICE, _status(ok and app.storage_ready))

        tasks.append(
            asyncio.create_task(
                vectors.watch_health(report_vectors, config.health_check_interval_seconds), name="vector-health"
            )
        )
    tasks.append(asyncio.create_task(_watch_storage_health(app), name="storage-health"))
    if app.formation is not None and app.formation.enabled:  # docs/MEMORY.md
        tasks.append(asyncio.create_task(app.formation.run(), name="formation"))
    tasks.append(asyncio.create_task(_compact_events(app), name="event-compaction"))
    tasks.append(asyncio.create_task(_reload_credentials(app), name="credentials-reload"))
    if app.authenticator.jwt is not None:  # the issuer's keys, re-read periodically (transport/oidc.py)
        tasks.append(asyncio.create_task(app.authenticator.jwt.keys.run(), name="jwks-refresh"))
    tasks.append(asyncio.create_task(_sweep_retention(app), name="session-retention"))
    if config.mongodb_uri:
        from memoryd.storage.mongo.tail import follow_commits

        tail = follow_commits(
            cast("MongoStore", store),
            mode=config.mongodb_change_streams,
            poll_interval=config.watch_poll_interval_seconds,
        )
        tasks.append(asyncio.create_task(tail, name="event-tail"))
    elif config.workers > 1 or (app.formation is not None and app.formation.remote):
        # Sibling workers, or formation in the engine process, commit to the same SQLite file:
        # Watch streams see their events as soon as they are committed.
        from memoryd.storage.sqlite.tail import follow_commits as follow_sqlite_commits

        tail = follow_sqlite_commits(store, Path(config.data_dir) / "memoryd.db")
        tasks.append(asyncio.create_task(tail, name="event-tail"))
    return tasks


async def start(config: Config, *, reuse_port: bool = False, worker_index: int = 0) -> App:
    """Build and serve `config` (gRPC, and HTTP/JSON unless it is off); returns the running App."""
    return await serve(await build(config), reuse_port=reuse_port, worker_index=worker_index)


async def serve(parts: Parts, *, reuse_port: bool = False, worker_index: int = 0) -> App:
    """Listen and serve what `build` made, with the background tasks; raises OSError (after
    closing what `parts` opened) when an address cannot be bound."""
    config, store, vectors, credentials = parts.config, parts.store, parts.vectors, parts.credentials
    health_servicer = health.aio.HealthServicer()
    try:
        server = _grpc_server(parts, health_servicer, reuse_port=reuse_port, worker_index=worker_index)
    except OSError:  # the metrics listener
        if vectors is not None:
            await vectors.close()
        await store.close()
        raise
    servicers, storage_ready, hub, auth = parts.servicers, parts.storage_ready, parts.hub, parts.auth
    try:
        if credentials is None:
            port = server.add_insecure_port(config.listen)
        else:
            port = server.add_secure_port(config.listen, credentials)
    except RuntimeError:  # grpcio reports a failed bind (port in use) this way
        port = 0
    http_server = None
    bind_error = None if port else OSError(bind_failure(config.listen))
    if port and config.http_address:
        try:
            http_server = await _start_http(config, servicers, health_servicer, reuse_port=reuse_port)
        except OSError as error:
            bind_error = addresses.bind_error(HTTP_LISTENER, config.http_address, error) if error.errno else error
    if bind_error is not None:
        await server.stop(None)
        if vectors is not None:
            await vectors.close()
        await store.close()
        raise bind_error
    # The event loop's thread holds the GIL while it is busy (a Watch replay, a wide fan-out),
    # and Python hands it to a waiting thread only every switch interval; the SQLite writer
    # thread needs it back after each statement of a commit. At the default 5 ms a replay
    # took SaveMessage's p99 from 19 to 93 ms (docs/EVENTS.md, "Sharing the process").
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_SECONDS)
    await server.start()
    await _set_serving(health_servicer, storage_ready, vectors_ready=False)  # the vector health task opens that side

    app = App(
        config,
        store,
        server,
        health_servicer,
        port,
        http=http_server,
        hub=hub,
        vectors=vectors,
        storage_ready=storage_ready,
        authenticator=auth.authenticator,
        formation=parts.formation,
    )
    app.tasks += _background_tasks(app)
    if config.port_file:
        Path(config.port_file).write_text(str(port))
    log.info(
        "serving",
        listen=config.listen,
        port=port,
        http=config.http_address or "off",
        http_port=app.http_port,
        backend=config.backend,
        auth=auth_mode(auth.authenticator),
        tenants=len(auth.authenticator.tenants),
        tls="mtls" if config.tls_client_ca else ("tls" if credentials else "off"),
    )
    return app
