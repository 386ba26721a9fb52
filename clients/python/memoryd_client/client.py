"""MemoryClient: the async (grpc.aio) client for memoryd."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from .connection import Connection
from .errors import from_rpc_error
from .idempotency import AsyncIdempotencyKeyInterceptor
from .watch import EventWatch, Resumption

Response = TypeVar("Response")


class MemoryClient(Connection):
    """Async client for memoryd's six memoryd.v1 services (SyncMemoryClient is the blocking twin).

    Usage::

        async with MemoryClient("127.0.0.1:50051") as client:
            await client.save_message("s1", message("user", "hello"))
            history = await client.get_history("s1")

    Arguments (target, token, credentials, timeout, retry, options): see Connection.

    Every append gets an idempotency key when it has none, so the retried
    RPCs are safe to run twice. Failed calls raise memoryd_client.RpcError
    subclasses carrying the server's google.rpc details.
    """

    def _open_channel(
        self, target: str, credentials: grpc.ChannelCredentials | None, options: list[tuple[str, Any]]
    ) -> grpc.aio.Channel:
        interceptors = [AsyncIdempotencyKeyInterceptor()]
        if credentials is None:
            return grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)
        return grpc.aio.secure_channel(target, credentials, options=options, interceptors=interceptors)

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
