"""MemoryClient: the async (grpc.aio) client for memoryd."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import grpc

from .connection import DEFAULT_TIMEOUT, Connection, channel_options
from .errors import from_rpc_error
from .idempotency import AsyncIdempotencyKeyInterceptor
from .service_config import DEFAULT_RETRY
from .watch import EventWatch, Resumption

Response = TypeVar("Response")


class MemoryClient(Connection):
    """Async client for memoryd's six memoryd.v1 services (SyncMemoryClient is the blocking twin).

    Usage::

        async with MemoryClient("127.0.0.1:50051") as client:
            await client.save_message("s1", message("user", "hello"))
            history = await client.get_history("s1")

    Args:
        target: "host:port" of the server.
        token: bearer token sent as `authorization: Bearer <token>` on every call.
        credentials: TLS channel credentials (grpc.ssl_channel_credentials(...));
            None means a plaintext channel (what the embedded default serves on loopback).
        timeout: default deadline in seconds of every unary call; each method
            also takes `timeout=` for that call.
        retry: gRPC service config holding the retry policy (default: the
            contract's, see retry_service_config); None disables retries.
        options: extra gRPC channel options.

    Every append gets an idempotency key when it has none, so the retried
    RPCs are safe to run twice. Failed calls raise memoryd_client.RpcError
    subclasses carrying the server's google.rpc details.
    """

    def __init__(
        self,
        target: str = "127.0.0.1:50051",
        *,
        token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: Mapping[str, Any] | None = DEFAULT_RETRY,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        settings = {"options": channel_options(retry, options), "interceptors": [AsyncIdempotencyKeyInterceptor()]}
        if credentials is None:
            channel = grpc.aio.insecure_channel(target, **settings)
        else:
            channel = grpc.aio.secure_channel(target, credentials, **settings)
        super().__init__(channel, token, timeout)

    async def close(self) -> None:
        """Closes the channel."""
        await self.channel.close()

    async def __aenter__(self) -> MemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _invoke(
        self, method: Callable[..., Awaitable[Any]], request: Any, timeout: float | None, result: Callable[[Any], Response]
    ) -> Response:
        try:
            response = await method(request, **self._call_options(timeout))
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err) from None
        return result(response)

    async def _iterate(self, page: Callable[[str], Any], items: str) -> AsyncIterator[Any]:
        token = ""
        while True:
            response = await self._run(page(token))
            for item in getattr(response, items):
                yield item
            token = response.next_page_token
            if not token:
                return

    def _watch(self, state: Resumption) -> EventWatch:
        return EventWatch(self.events, state, lambda: self._call_metadata)
