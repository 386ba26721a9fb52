"""MemoryClient: an async, typed client for memoryd over the generated stubs."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import grpc

from memoryd.v1 import (
    entry_service_pb2_grpc,
    event_pb2,
    event_service_pb2,
    event_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    message_pb2,
    metadata_service_pb2,
    metadata_service_pb2_grpc,
    summary_service_pb2_grpc,
    vector_service_pb2_grpc,
)

from .errors import from_rpc_error
from .messages import to_struct
from .watch import EventWatch

Response = TypeVar("Response")

DEFAULT_TIMEOUT = 10.0
"""Seconds; the deadline of every unary call unless the call passes its own."""


def retry_service_config(
    *,
    max_attempts: int = 5,
    initial_backoff: float = 0.1,
    max_backoff: float = 2.0,
    backoff_multiplier: float = 2.0,
) -> dict[str, Any]:
    """gRPC service config retrying every unary memoryd RPC on UNAVAILABLE.

    gRPC runs the retries inside the channel (with jittered exponential
    backoff, within the call's deadline). Watch is left out: a stream is
    resumed by EventWatch from its last seq instead.
    """
    return {
        "methodConfig": [
            {
                "name": [
                    {"service": "memoryd.v1.MemoryService"},
                    {"service": "memoryd.v1.MetadataService"},
                    {"service": "memoryd.v1.SummaryService"},
                    {"service": "memoryd.v1.EntryService"},
                    {"service": "memoryd.v1.VectorService"},
                    {"service": "memoryd.v1.EventService", "method": "PublishEvent"},
                ],
                "retryPolicy": {
                    "maxAttempts": max_attempts,
                    "initialBackoff": f"{initial_backoff}s",
                    "maxBackoff": f"{max_backoff}s",
                    "backoffMultiplier": backoff_multiplier,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ]
    }


DEFAULT_RETRY = retry_service_config()
"""The retry policy MemoryClient uses unless told otherwise."""


class MemoryClient:
    """Async client for memoryd's memoryd.v1 services.

    Usage::

        async with MemoryClient("127.0.0.1:50051") as client:
            await client.save_message("s1", message("user", "hello"))
            history = await client.get_history("s1")

    Args:
        target: "host:port" of the server.
        token: bearer token sent as `authorization: Bearer <token>` on every call.
        credentials: TLS channel credentials; None means a plaintext channel
            (what the embedded default serves on loopback).
        timeout: default deadline in seconds of every unary call; each method
            also takes `timeout=` for that call.
        retry: gRPC service config holding the retry policy (see
            retry_service_config); None disables retries.
        options: extra gRPC channel options.
        channel: an existing grpc.aio channel to use instead of creating one
            (the client then leaves closing it to the caller).

    Defaults of optional arguments are the contract's (for example
    get_history's limit=50). Failed calls raise memoryd_client.RpcError
    subclasses carrying the server's google.rpc details.

    The SummaryService, EntryService and VectorService stubs are the
    attributes `summaries`, `entries` and `vectors`; `call()` runs any of
    their RPCs with the same deadline, token and error mapping:

        cursor = await client.call(client.summaries.GetSummaryCursor,
                                   GetSummaryCursorRequest(session_id="s1"))
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
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        self.timeout = timeout
        self._call_metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._owns_channel = channel is None
        if channel is None:
            channel_options: list[tuple[str, Any]] = [("grpc.enable_retries", 1 if retry else 0)]
            if retry:
                channel_options.append(("grpc.service_config", json.dumps(retry)))
            channel_options.extend(options)
            if credentials is None:
                channel = grpc.aio.insecure_channel(target, options=channel_options)
            else:
                channel = grpc.aio.secure_channel(target, credentials, options=channel_options)
        self.channel = channel
        self._memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        self._metadata = metadata_service_pb2_grpc.MetadataServiceStub(channel)
        self._events = event_service_pb2_grpc.EventServiceStub(channel)
        self.summaries = summary_service_pb2_grpc.SummaryServiceStub(channel)
        self.entries = entry_service_pb2_grpc.EntryServiceStub(channel)
        self.vectors = vector_service_pb2_grpc.VectorServiceStub(channel)

    async def close(self) -> None:
        """Closes the channel (when the client created it)."""
        if self._owns_channel:
            await self.channel.close()

    async def __aenter__(self) -> MemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def call(
        self, method: Callable[..., Awaitable[Response]], request: Any, *, timeout: float | None = None
    ) -> Response:
        """Runs a unary RPC of any stub on this channel with the client's default
        deadline (or `timeout`), bearer token and RpcError mapping."""
        return await self._call(method, request, timeout)

    async def _call(self, method: Callable[..., Awaitable[Response]], request: Any, timeout: float | None) -> Response:
        try:
            return await method(
                request,
                timeout=self.timeout if timeout is None else timeout,
                metadata=self._call_metadata,
            )
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err) from None

    # -- MemoryService -------------------------------------------------------

    async def save_message(
        self,
        session_id: str,
        message: message_pb2.Message,
        *,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> memory_service_pb2.SaveMessageResponse:
        """Appends one message; returns it with id, seq and timestamp.

        `idempotency_key=None` generates one, so the automatic retries on
        UNAVAILABLE never store the message twice; pass "" to send none.
        """
        request = memory_service_pb2.SaveMessageRequest(
            session_id=session_id, message=message, idempotency_key=_key(idempotency_key)
        )
        return await self._call(self._memory.SaveMessage, request, timeout)

    async def save_messages(
        self,
        session_id: str,
        messages: Iterable[message_pb2.Message],
        *,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> memory_service_pb2.SaveMessagesResponse:
        """Appends a batch atomically (all or nothing). Idempotency as in save_message."""
        request = memory_service_pb2.SaveMessagesRequest(
            session_id=session_id, messages=list(messages), idempotency_key=_key(idempotency_key)
        )
        return await self._call(self._memory.SaveMessages, request, timeout)

    async def get_history(
        self, session_id: str, limit: int = 50, *, timeout: float | None = None
    ) -> list[message_pb2.Message]:
        """The newest `limit` unarchived messages, oldest first."""
        request = memory_service_pb2.GetHistoryRequest(session_id=session_id, limit=limit)
        return list((await self._call(self._memory.GetHistory, request, timeout)).messages)

    async def get_full_history(
        self, session_id: str, *, page_size: int = 100, page_token: str = "", timeout: float | None = None
    ) -> memory_service_pb2.GetFullHistoryResponse:
        """One page of every message (archived included), oldest first."""
        request = memory_service_pb2.GetFullHistoryRequest(
            session_id=session_id, page_size=page_size, page_token=page_token
        )
        return await self._call(self._memory.GetFullHistory, request, timeout)

    async def iter_full_history(
        self, session_id: str, *, page_size: int = 100, timeout: float | None = None
    ) -> AsyncIterator[message_pb2.Message]:
        """Every message of the session (archived included), oldest first, page by page."""
        token = ""
        while True:
            page = await self.get_full_history(session_id, page_size=page_size, page_token=token, timeout=timeout)
            for item in page.messages:
                yield item
            token = page.next_page_token
            if not token:
                return

    async def list_messages_in_range(
        self,
        session_id: str,
        from_ts: int,
        to_ts: int,
        *,
        roles: Sequence[str] = (),
        exclude_kinds: Sequence[str] = (),
        page_size: int = 1000,
        page_token: str = "",
        timeout: float | None = None,
    ) -> memory_service_pb2.ListMessagesInRangeResponse:
        """One page of the messages with from_ts <= timestamp <= to_ts (archived included)."""
        request = memory_service_pb2.ListMessagesInRangeRequest(
            session_id=session_id,
            from_ts=from_ts,
            to_ts=to_ts,
            roles=roles,
            exclude_kinds=exclude_kinds,
            page_size=page_size,
            page_token=page_token,
        )
        return await self._call(self._memory.ListMessagesInRange, request, timeout)

    async def get_recent_across_sessions(
        self,
        limit: int,
        *,
        since_ts: int | None = None,
        platform: str | None = None,
        exclude_session_ids: Sequence[str] = (),
        roles: Sequence[str] = (),
        kinds: Sequence[str] = (),
        exclude_kinds: Sequence[str] = (),
        timeout: float | None = None,
    ) -> list[message_pb2.SessionMessage]:
        """The newest min(limit, matches) unarchived messages across sessions, oldest first.

        Empty `roles` means ["user", "assistant"]; `exclude_kinds` wins over `kinds`.
        """
        request = memory_service_pb2.GetRecentAcrossSessionsRequest(
            limit=limit,
            since_ts=since_ts,
            platform=platform,
            exclude_session_ids=exclude_session_ids,
            roles=roles,
            kinds=kinds,
            exclude_kinds=exclude_kinds,
        )
        return list((await self._call(self._memory.GetRecentAcrossSessions, request, timeout)).messages)

    async def trim_history(self, session_id: str, keep_recent: int, *, timeout: float | None = None) -> int:
        """Archives all but the newest `keep_recent` unarchived messages; returns how many."""
        request = memory_service_pb2.TrimHistoryRequest(session_id=session_id, keep_recent=keep_recent)
        return (await self._call(self._memory.TrimHistory, request, timeout)).archived_count

    async def replace_history(
        self, session_id: str, messages: Iterable[message_pb2.Message], *, timeout: float | None = None
    ) -> memory_service_pb2.ReplaceHistoryResponse:
        """Atomically swaps the session's unarchived history for `messages`."""
        request = memory_service_pb2.ReplaceHistoryRequest(session_id=session_id, messages=list(messages))
        return await self._call(self._memory.ReplaceHistory, request, timeout)

    async def update_message_content(
        self, session_id: str, old_text: str, new_text: str, recent_limit: int = 100, *, timeout: float | None = None
    ) -> int:
        """Replaces old_text with new_text in the newest `recent_limit` messages; returns messages changed."""
        request = memory_service_pb2.UpdateMessageContentRequest(
            session_id=session_id, old_text=old_text, new_text=new_text, recent_limit=recent_limit
        )
        return (await self._call(self._memory.UpdateMessageContent, request, timeout)).changed_count

    async def delete_messages_by_timestamps(
        self, session_id: str, timestamps: Iterable[int], *, timeout: float | None = None
    ) -> int:
        """Deletes the session's messages carrying any of `timestamps`; returns how many."""
        request = memory_service_pb2.DeleteMessagesByTimestampsRequest(
            session_id=session_id, timestamps=list(timestamps)
        )
        return (await self._call(self._memory.DeleteMessagesByTimestamps, request, timeout)).deleted_count

    async def delete_messages(self, session_id: str, ids: Iterable[str], *, timeout: float | None = None) -> int:
        """Deletes messages by id (unknown ids are ignored); returns how many."""
        request = memory_service_pb2.DeleteMessagesRequest(session_id=session_id, ids=list(ids))
        return (await self._call(self._memory.DeleteMessages, request, timeout)).deleted_count

    async def clear_session(
        self,
        session_id: str,
        targets: Sequence[memory_service_pb2.ClearTarget.ValueType] = (),
        *,
        timeout: float | None = None,
    ) -> list[memory_service_pb2.ClearResult]:
        """Clears a session; empty `targets` means messages only. One result per target."""
        request = memory_service_pb2.ClearSessionRequest(session_id=session_id, targets=targets)
        return list((await self._call(self._memory.ClearSession, request, timeout)).results)

    async def clear_all(
        self, targets: Sequence[memory_service_pb2.ClearTarget.ValueType] = (), *, timeout: float | None = None
    ) -> list[memory_service_pb2.ClearResult]:
        """Clears every session of the tenant; empty `targets` means messages only."""
        request = memory_service_pb2.ClearAllRequest(targets=targets)
        return list((await self._call(self._memory.ClearAll, request, timeout)).results)

    async def list_sessions(
        self, *, page_size: int = 100, page_token: str = "", timeout: float | None = None
    ) -> memory_service_pb2.ListSessionsResponse:
        """One page of sessions holding messages, ordered by session id."""
        request = memory_service_pb2.ListSessionsRequest(page_size=page_size, page_token=page_token)
        return await self._call(self._memory.ListSessions, request, timeout)

    async def iter_sessions(
        self, *, page_size: int = 100, timeout: float | None = None
    ) -> AsyncIterator[memory_service_pb2.SessionInfo]:
        """Every session holding messages, ordered by session id."""
        token = ""
        while True:
            page = await self.list_sessions(page_size=page_size, page_token=token, timeout=timeout)
            for info in page.sessions:
                yield info
            token = page.next_page_token
            if not token:
                return

    # -- MetadataService -----------------------------------------------------

    async def save_metadata(
        self, namespace: str, key: str, data: Mapping[str, Any], *, timeout: float | None = None
    ) -> metadata_service_pb2.MetadataEntry:
        """Creates or replaces the JSON object at (namespace, key)."""
        request = metadata_service_pb2.SaveMetadataRequest(namespace=namespace, key=key, data=to_struct(data))
        return (await self._call(self._metadata.SaveMetadata, request, timeout)).entry

    async def get_metadata(
        self, namespace: str, key: str, *, timeout: float | None = None
    ) -> metadata_service_pb2.MetadataEntry | None:
        """The record at (namespace, key), or None when there is none."""
        request = metadata_service_pb2.GetMetadataRequest(namespace=namespace, key=key)
        response = await self._call(self._metadata.GetMetadata, request, timeout)
        return response.entry if response.found else None

    async def list_metadata(
        self, namespace: str, *, page_size: int = 100, page_token: str = "", timeout: float | None = None
    ) -> metadata_service_pb2.ListMetadataResponse:
        """One page of a namespace's records, ordered by key."""
        request = metadata_service_pb2.ListMetadataRequest(
            namespace=namespace, page_size=page_size, page_token=page_token
        )
        return await self._call(self._metadata.ListMetadata, request, timeout)

    async def delete_metadata(self, namespace: str, key: str, *, timeout: float | None = None) -> bool:
        """Deletes one record; True when it existed."""
        request = metadata_service_pb2.DeleteMetadataRequest(namespace=namespace, key=key)
        return (await self._call(self._metadata.DeleteMetadata, request, timeout)).deleted

    # -- EventService --------------------------------------------------------

    async def publish_event(
        self,
        session_id: str,
        *,
        compress_requested: event_pb2.CompressRequested | None = None,
        compress_progress: event_pb2.CompressProgress | None = None,
        timeout: float | None = None,
    ) -> event_pb2.Event:
        """Publishes a caller-originated event (exactly one payload); returns it with seq and time."""
        request = event_service_pb2.PublishEventRequest(
            session_id=session_id, compress_requested=compress_requested, compress_progress=compress_progress
        )
        return (await self._call(self._events.PublishEvent, request, timeout)).event

    def watch(
        self,
        session_ids: Sequence[str] = (),
        types: Sequence[event_pb2.EventType.ValueType] = (),
        *,
        after_seq: int | None = None,
        max_reconnects: int | None = None,
        initial_backoff: float = 0.1,
        max_backoff: float = 5.0,
    ) -> EventWatch:
        """Watches the event log: an async iterator of Events that resumes after reconnects.

        `after_seq=None` starts from now; otherwise every event with a larger
        seq is delivered. Empty filters mean every session / every type. The
        stream has no deadline; `max_reconnects` bounds consecutive failed
        reconnects (None: keep trying).
        """
        return EventWatch(
            self._events,
            session_ids=session_ids,
            types=types,
            after_seq=after_seq,
            metadata=lambda: self._call_metadata,
            max_reconnects=max_reconnects,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
        )


def _key(idempotency_key: str | None) -> str:
    return uuid.uuid4().hex if idempotency_key is None else idempotency_key
