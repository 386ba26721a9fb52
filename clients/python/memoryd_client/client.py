"""MemoryClient: the async (grpc.aio) client for memoryd."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from .connection import Connection, bearer_metadata
from .errors import from_rpc_error
from .idempotency import AsyncIdempotencyKeyInterceptor
from .loops import LoopChannels
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

    One client serves every event loop: it may be made where no loop runs, and called from
    `asyncio.run` in any thread or from a framework's own loop (`Runner.run_sync`); each
    loop gets its own grpc.aio channel on its first call (memoryd_client.loops).
    """

    def _open_channel(
        self, target: str, credentials: grpc.ChannelCredentials | None, options: list[tuple[str, Any]]
    ) -> LoopChannels:
        def open_channel() -> grpc.aio.Channel:
            interceptors = [AsyncIdempotencyKeyInterceptor()]
            if credentials is None:
                return grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)
            return grpc.aio.secure_channel(target, credentials, options=options, interceptors=interceptors)

        return LoopChannels(open_channel)

    async def close(self) -> None:
        """Closes the channels (every loop's that is still running)."""
        await self.channel.close()

    async def __aenter__(self) -> MemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _invoke(
        self,
        method: Callable[..., Awaitable[Any]],
        request: Any,
        timeout: float | None,
        result: Callable[[Any], Response],
    ) -> Response:
        try:
            response = await method(request, timeout=self._deadline(timeout), metadata=await self._metadata())
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
        state.resume_on_expiry = self._token_provider is not None
        return EventWatch(self.events, state, self._metadata)

    async def _metadata(self) -> tuple[tuple[str, str], ...]:
        """The call's bearer metadata: the token provider's token (awaited when it is a
        coroutine), or the fixed one."""
        if self._token_provider is None:
            return self._call_metadata
        token = self._token_provider()
        if inspect.isawaitable(token):
            token = await token
        return bearer_metadata(token)
