"""SyncMemoryClient: the blocking (grpc) client for memoryd."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc

from .connection import Connection
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
            response = method(request, **self._call_options(timeout))
        except grpc.RpcError as err:
            raise from_rpc_error(err) from None
        return result(response)

    def _iterate(self, page: Callable[[str], Any], items: str) -> Iterator[Any]:
        token = ""
        while True:
            response = self._run(page(token))
            for item in getattr(response, items):
                yield item
            token = response.next_page_token
            if not token:
                return

    def _watch(self, state: Resumption) -> SyncEventWatch:
        return SyncEventWatch(self.events, state, lambda: self._call_metadata)
