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
import socket
import ssl
from collections.abc import Iterator
from typing import Any

import uvicorn

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


class HttpServer:
    """Serves `app` on an already bound socket until stop()."""

    def __init__(self, app: Any, sock: socket.socket, *, tls_cert: str = "", tls_key: str = "", tls_client_ca: str = "") -> None:
        logging.getLogger("uvicorn").setLevel(logging.WARNING)  # its lifecycle chatter is not JSON
        config = uvicorn.Config(
            app,
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
        """Stop accepting, let calls in flight finish for `grace` seconds, then cancel them."""
        if self._task is None:
            self._socket.close()
            return
        self._server.config.timeout_graceful_shutdown = max(grace, 0.1)
        self._server.should_exit = True
        self._server.exit_requested.set()
        await self._task
