"""The HTTP listener: uvicorn serving an ASGI app on memoryd's own event loop.

uvicorn runs as one more task of the process's loop (next to grpc.aio), so the Connect
endpoints call the same servicer objects, stores and watch hub as gRPC, with no thread
hop. memoryd's entry point owns SIGTERM/SIGINT (cli.py): this server installs no signal
handlers and stops when App.stop() stops it, after health turns NOT_SERVING and Watch
streams have been ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import socket
import ssl
from collections.abc import Iterator
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from memoryd import addresses

STARTUP_TIMEOUT_S = 10.0


class _EmbeddedServer(uvicorn.Server):
    """uvicorn.Server as a task of a loop it does not own: no signal handlers, prompt stop()."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.exit_requested = asyncio.Event()

    async def main_loop(self) -> None:
        # uvicorn polls should_exit every 0.1 s; wait for the request instead, ticking once a
        # second (on_tick refreshes the Date header when its counter is a multiple of 10).
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 10) % 864000
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self.exit_requested.wait()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # uvicorn's would replace memoryd's handlers
        yield

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn always sleeps 0.1 s for open connections to react; with none open there is
        # nothing to wait for (tests start and stop hundreds of servers).
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets)
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for server in self.servers:
            await server.wait_closed()


def bind(listen: str, *, reuse_port: bool = False) -> socket.socket:
    """A listening TCP socket on host:port (port 0 picks one); SO_REUSEPORT for --workers."""
    host, port = addresses.bind_host(listen), addresses.split(listen)[1]
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


# --http-max-connections 0: this share of the process's open-file limit (the rest stays for
# gRPC, the store and the vector engine), at most AUTO_MAX_CONNECTIONS.
AUTO_SHARE_OF_OPEN_FILES = 0.5
AUTO_MAX_CONNECTIONS = 10_000
MIN_CONNECTIONS = 16
MIN_BACKLOG, MAX_BACKLOG = 16, 1024


def max_connections(configured: int) -> int:
    """The connection bound of one HTTP listener: `configured`, or (0) half the open-file limit."""
    if configured:
        return configured
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return AUTO_MAX_CONNECTIONS
    return max(MIN_CONNECTIONS, min(AUTO_MAX_CONNECTIONS, int(soft * AUTO_SHARE_OF_OPEN_FILES)))


class ListenerBounds:
    """What one client may hold of a listener: a request's headers and body must arrive within
    `read_seconds` of its first byte (of the connection, for the first request), else the
    connection is closed; at most `limit` connections are open, and a connection past it
    closes the one that has waited longest without a request being handled (one still sending
    its request, or idle between requests) or, when every one is handling a request, itself.
    So stalled and slow clients hold their own connection for a bounded time, and never the
    listener: a new caller always gets a connection (uvicorn bounds neither; its keep-alive
    timeout starts only after a first response)."""

    def __init__(self, read_seconds: float, limit: int) -> None:
        self.read_seconds = read_seconds
        self.limit = limit
        # The listen backlog, which is also how many connections asyncio accepts in one go
        # before any of them is admitted here (and an older one closed): past the bound, the
        # descriptors held peak at limit + backlog, so it is a quarter of the bound.
        self.backlog = max(MIN_BACKLOG, min(MAX_BACKLOG, limit // 4))
        self.open: set[BoundedHttpProtocol] = set()
        # Connections no request of which is being handled, the longest waiting first.
        self.waiting: dict[BoundedHttpProtocol, None] = {}
        self.read_timeouts = 0  # closed for taking longer than read_seconds
        self.evicted = 0  # closed to make room for a newer connection
        self.refused = 0  # closed at once: every open connection was handling a request

    def protocol(self) -> type[BoundedHttpProtocol]:
        """uvicorn's httptools protocol, bound by these bounds (uvicorn.Config(http=...))."""
        return type("BoundedHttpProtocol", (BoundedHttpProtocol,), {"bounds": self})

    def admit(self, new: BoundedHttpProtocol) -> None:
        self.open.add(new)
        self.waiting[new] = None
        while len(self.open) > self.limit:
            victim = next(iter(self.waiting))
            if victim is new:
                self.refused += 1
            else:
                self.evicted += 1
            victim.close_now()
            if victim is new:
                return

    def forget(self, protocol: BoundedHttpProtocol) -> None:
        self.open.discard(protocol)
        self.waiting.pop(protocol, None)


class BoundedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol under a listener's ListenerBounds."""

    bounds: ListenerBounds

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read_timer: asyncio.TimerHandle | None = None
        self._handling = 0  # requests read whole whose response is not complete

    def close_now(self) -> None:
        """Close the connection (a request in progress sees a disconnect) and stop counting it."""
        self.bounds.forget(self)
        self._stop_reading()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def _start_reading(self) -> None:
        self._stop_reading()
        self._read_timer = self.loop.call_later(self.bounds.read_seconds, self._read_timed_out)

    def _stop_reading(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _read_timed_out(self) -> None:
        self._read_timer = None
        self.bounds.read_timeouts += 1
        self.close_now()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_reading()
        self.bounds.admit(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.bounds.forget(self)
        self._stop_reading()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._read_timer is None:  # a request after the first (the first's runs from the connection)
            self._start_reading()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._stop_reading()
        if self.cycle is not None and not self.cycle.response_complete:  # (an early answer came before it)
            self._handling += 1
            self.bounds.waiting.pop(self, None)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._handling = max(0, self._handling - 1)
        if not self._handling and self in self.bounds.open:
            self.bounds.waiting[self] = None  # waits for its next request, the newest to wait


class HttpServer:
    """Serves `app` on an already bound socket until stop(), under ListenerBounds."""

    def __init__(
        self,
        app: Any,
        sock: socket.socket,
        *,
        tls_cert: str = "",
        tls_key: str = "",
        tls_client_ca: str = "",
        read_timeout_seconds: float = 60.0,
        connection_limit: int = 0,
    ) -> None:
        logging.getLogger("uvicorn").setLevel(logging.WARNING)  # its lifecycle chatter is not JSON
        self.bounds = ListenerBounds(read_timeout_seconds, max_connections(connection_limit))
        config = uvicorn.Config(
            app,
            http=self.bounds.protocol(),
            backlog=self.bounds.backlog,
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
            ws="none",
            ssl_certfile=tls_cert or None,
            ssl_keyfile=tls_key or None,
            ssl_ca_certs=tls_client_ca or None,
            ssl_cert_reqs=ssl.CERT_REQUIRED if tls_client_ca else ssl.CERT_NONE,
        )
        self._server = _EmbeddedServer(config)
        self._socket = sock
        self._task: asyncio.Task | None = None
        self.port: int = sock.getsockname()[1]

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]), name="http-server")
        async with asyncio.timeout(STARTUP_TIMEOUT_S):
            while not self._server.started:
                if self._task.done():
                    self._task.result()  # raises why it failed
                    raise OSError("the HTTP server stopped while starting")
                await asyncio.sleep(0.005)

    async def stop(self, grace: float) -> None:
        """Stop accepting, let calls in flight finish for `grace` seconds, then cancel them.
        A connection still sending its request (or idle) is closed at once: nothing of it has
        reached a servicer, and a stalled client would otherwise hold the stop for `grace`."""
        if self._task is None:
            self._socket.close()
            return
        for waiting in list(self.bounds.waiting):
            waiting.close_now()
        self._server.config.timeout_graceful_shutdown = max(grace, 0.1)  # type: ignore[assignment]  # seconds: a float works
        self._server.should_exit = True
        self._server.exit_requested.set()
        await self._task
