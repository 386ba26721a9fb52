"""SyncMemoryClient: the blocking (grpc) client for memoryd."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc

from .connection import Connection, bearer_metadata
from .errors import from_rpc_error
from .idempotency import IdempotencyKeyInterceptor
from .watch import Resumption, SyncEventWatch

Response = TypeVar("Response")


class SyncMemoryClient(Connection):
    """Blocking client for memoryd's six memoryd.v1 services: MemoryClient's methods,
    arguments and conventions, without `await`.

    Usage::

        with SyncMemoryClient("127.0.0.1:50051") as client:
            client.save_message("s1", message("user", "hello"))
            history = client.get_history("s1")

    Arguments as in MemoryClient (see Connection). Safe to share between threads (grpc channels are).
    """

    def _open_channel(
        self, target: str, credentials: grpc.ChannelCredentials | None, options: list[tuple[str, Any]]
    ) -> grpc.Channel:
        if credentials is None:
            self._raw_channel = grpc.insecure_channel(target, options=options)
        else:
            self._raw_channel = grpc.secure_channel(target, credentials, options=options)
        return grpc.intercept_channel(self._raw_channel, IdempotencyKeyInterceptor())

    def close(self) -> None:
        """Closes the channel."""
        self._raw_channel.close()

    def __enter__(self) -> SyncMemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _invoke(
        self, method: Callable[..., Any], request: Any, timeout: float | None, result: Callable[[Any], Response]
    ) -> Response:
        try:
            response = method(request, timeout=self._deadline(timeout), metadata=self._metadata())
        except grpc.RpcError as err:
            raise from_rpc_error(err) from None
        return result(response)

    def _iterate(self, page: Callable[[str], Any], items: str) -> Iterator[Any]:
        token = ""
        while True:
            response = self._run(page(token))
            yield from getattr(response, items)
            token = response.next_page_token
            if not token:
                return

    def _watch(self, state: Resumption) -> SyncEventWatch:
        state.resume_on_expiry = self._token_provider is not None
        return SyncEventWatch(self.events, state, self._metadata)

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        """The call's bearer metadata: the token provider's token, or the fixed one."""
        if self._token_provider is None:
            return self._call_metadata
        token = self._token_provider()
        if inspect.isawaitable(token):
            if inspect.iscoroutine(token):
                token.close()  # never awaited: close it, no warning
            raise TypeError("SyncMemoryClient needs a synchronous token_provider (MemoryClient takes async ones)")
        return bearer_metadata(token)
