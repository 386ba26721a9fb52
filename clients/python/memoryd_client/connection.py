"""What MemoryClient and SyncMemoryClient share besides the methods: channel
options (retry service config), the bearer token, the stubs and the deadline."""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import grpc

from memoryd.v1 import (
    entry_service_pb2_grpc,
    event_pb2,
    event_service_pb2_grpc,
    formation_service_pb2_grpc,
    memory_service_pb2_grpc,
    metadata_service_pb2_grpc,
    summary_service_pb2_grpc,
    vector_service_pb2_grpc,
)

from .methods import Call, Methods
from .service_config import DEFAULT_RETRY
from .watch import Resumption

DEFAULT_TIMEOUT = 10.0
"""Seconds; the deadline of every unary call unless the call passes its own."""


def channel_options(retry: Mapping[str, Any] | None, options: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """gRPC channel options: the retry service config (or retries off), then the caller's options."""
    result: list[tuple[str, Any]] = [("grpc.enable_retries", 1 if retry else 0)]
    if retry:
        result.append(("grpc.service_config", json.dumps(retry)))
    result.extend(options)
    return result


def bearer_metadata(token: str | None) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


TokenProvider = Callable[[], "str | None | Awaitable[str | None]"]
"""Gives the bearer token for the next call: called before every unary call and every
(re)opening of a Watch stream, so it can hand out a fresh JWT before the old one expires
(cache the token and refresh it near its `exp`: it is called often). Sync clients take a
plain function; MemoryClient also takes an async one."""


class Connection(Methods):
    """The stubs of all six services on one channel, plus the call conventions.

    Attributes `memory`, `metadata`, `events`, `vectors`, `summaries` and
    `entries` are the generated stubs; `call()` runs any of their unary RPCs
    with the client's deadline, token and error mapping.

    Args:
        target: "host:port" of the server.
        token: bearer token sent as `authorization: Bearer <token>` on every call.
        token_provider: instead of `token`, a function giving the token for each call
            (TokenProvider): for JWTs that expire. A Watch stream the server ends
            because its token expired (UNAUTHENTICATED, TOKEN_EXPIRED) reconnects with
            the provider's next token.
        credentials: TLS channel credentials (grpc.ssl_channel_credentials(...));
            None means a plaintext channel (what the embedded default serves on loopback).
        timeout: default deadline in seconds of every unary call; each method
            also takes `timeout=` for that call.
        retry: gRPC service config holding the retry policy (default: the
            contract's, see retry_service_config); None disables retries.
        options: extra gRPC channel options.
    """

    def __init__(
        self,
        target: str = "127.0.0.1:50051",
        *,
        token: str | None = None,
        token_provider: TokenProvider | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: Mapping[str, Any] | None = DEFAULT_RETRY,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        channel = self._open_channel(target, credentials, channel_options(retry, options))
        self.channel = channel
        self.timeout = timeout
        if token is not None and token_provider is not None:
            raise ValueError("pass either token or token_provider")
        self._call_metadata = bearer_metadata(token)
        self._token_provider = token_provider
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        self.metadata = metadata_service_pb2_grpc.MetadataServiceStub(channel)
        self.events = event_service_pb2_grpc.EventServiceStub(channel)
        self.vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
        self.summaries = summary_service_pb2_grpc.SummaryServiceStub(channel)
        self.entries = entry_service_pb2_grpc.EntryServiceStub(channel)
        self.formation = formation_service_pb2_grpc.FormationServiceStub(channel)

    def _open_channel(
        self, target: str, credentials: grpc.ChannelCredentials | None, options: list[tuple[str, Any]]
    ) -> Any:
        raise NotImplementedError  # a grpc or grpc.aio channel: the client classes

    def with_token(self, token: str | None) -> Any:
        """This client on the same channel, sending `token` (None: no token) instead of its own.

        For a process that calls memoryd for many callers, each with their own token (the
        MCP server over HTTP). Close only the original: the copy shares its channel.
        """
        other = copy.copy(self)
        other._call_metadata = bearer_metadata(token)
        other._token_provider = None
        return other

    def _run(self, call: Call[Any]) -> Any:
        method = getattr(getattr(self, call.service), call.method)
        return self._invoke(method, call.request, call.timeout, call.result)

    def call(self, method: Callable[..., Any], request: Any, *, timeout: float | None = None) -> Any:
        """Runs a unary RPC of any of the stubs with the client's deadline (or
        `timeout`), bearer token and RpcError mapping; awaitable on MemoryClient."""
        return self._invoke(method, request, timeout, lambda response: response)

    def _invoke(
        self, method: Callable[..., Any], request: Any, timeout: float | None, result: Callable[[Any], Any]
    ) -> Any:
        raise NotImplementedError  # sync or async: the client classes

    def _deadline(self, timeout: float | None) -> float:
        return self.timeout if timeout is None else timeout

    def watch(
        self,
        session_ids: Sequence[str] = (),
        types: Sequence[event_pb2.EventType] = (),
        *,
        after_seq: int | None = None,
        max_reconnects: int | None = None,
        initial_backoff: float = 0.1,
        max_backoff: float = 5.0,
    ) -> Any:
        """Watches the event log: an iterator of Events (async on MemoryClient) that
        resumes from its last seq after reconnects.

        `after_seq=None` starts from now; otherwise every event with a larger
        seq is delivered. Empty filters mean every session / every type. The
        stream has no deadline; `max_reconnects` bounds consecutive failed
        reconnects (None: keep trying).
        """
        state = Resumption(session_ids, types, after_seq, max_reconnects, initial_backoff, max_backoff)
        return self._watch(state)

    def _watch(self, state: Resumption) -> Any:
        raise NotImplementedError
