"""Every unary RPC of memoryd.v1 as a typed method, written once for both clients.

Each method here only *describes* a call: it builds the request from typed
arguments with the contract's defaults and says how to read the response (a
`Call`). `MemoryClient` (grpc.aio) and `SyncMemoryClient` (grpc) run the same
descriptions; the `unary` and `pages` descriptors hand each client a bound
method that is a coroutine function on the async client and a plain function
on the sync one.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

from google.protobuf import message as _message

from memoryd.v1 import (
    entry_service_pb2,
    event_pb2,
    event_service_pb2,
    formation_service_pb2,
    memory_service_pb2,
    message_pb2,
    metadata_service_pb2,
    summary_service_pb2,
    vector_service_pb2,
)

from .messages import to_struct

if TYPE_CHECKING:
    from .client import MemoryClient
    from .sync import SyncMemoryClient

P = ParamSpec("P")
T = TypeVar("T")
Item = TypeVar("Item")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One unary call: `service`.`method`(request), its answer read by `result`."""

    service: str  # attribute of the client holding the generated stub, e.g. "memory"
    method: str  # RPC name, e.g. "GetHistory"
    request: _message.Message
    result: Callable[[Any], T]
    timeout: float | None = None  # None: the client's default deadline


def _response(response: T) -> T:
    return response


class unary(Generic[P, T]):
    """Decorator: a function returning a Call becomes a client method running it."""

    def __init__(self, describe: Callable[Concatenate[Any, P], Call[T]]) -> None:
        self.describe = describe
        functools.update_wrapper(cast(Callable[..., Any], self), describe)  # a descriptor, not a callable
        self.signature = _bound_signature(describe)

    @overload
    def __get__(self, client: None, owner: type) -> unary[P, T]: ...
    @overload
    def __get__(self, client: MemoryClient, owner: type) -> Callable[P, Awaitable[T]]: ...
    @overload
    def __get__(self, client: SyncMemoryClient, owner: type) -> Callable[P, T]: ...
    def __get__(self, client: Any, owner: type) -> Any:
        if client is None:
            return self
        describe = self.describe

        @functools.wraps(describe)
        def method(*args: Any, **kwargs: Any) -> Any:
            return client._run(describe(client, *args, **kwargs))

        del method.__wrapped__  # help() and inspect show the method as users call it:
        method.__signature__ = self.signature  # type: ignore[attr-defined]
        return method


def _bound_signature(describe: Callable[..., Any]) -> inspect.Signature:
    """`describe`'s signature without `self`, returning what the Call's result is."""
    signature = inspect.signature(describe)
    returns = signature.return_annotation
    if isinstance(returns, str) and returns.startswith("Call[") and returns.endswith("]"):
        returns = returns[len("Call[") : -1]
    return signature.replace(parameters=list(signature.parameters.values())[1:], return_annotation=returns)


class pages(Generic[Item]):
    """Every item of a paged RPC, following next_page_token (an iterator; async on MemoryClient)."""

    def __init__(self, page: unary[..., Any], items: str) -> None:
        self.describe = page.describe
        self.items = items
        self.__doc__ = f"Every item of {page.describe.__name__}, page by page (same arguments, no page_token)."

    @overload
    def __get__(self, client: None, owner: type) -> pages[Item]: ...
    @overload
    def __get__(self, client: MemoryClient, owner: type) -> Callable[..., AsyncIterator[Item]]: ...
    @overload
    def __get__(self, client: SyncMemoryClient, owner: type) -> Callable[..., Iterator[Item]]: ...
    def __get__(self, client: Any, owner: type) -> Any:
        if client is None:
            return self
        describe, items = self.describe, self.items
        return lambda *args, **kwargs: client._iterate(
            lambda token: describe(client, *args, page_token=token, **kwargs), items
        )


class Methods:
    """The typed methods shared by MemoryClient and SyncMemoryClient.

    Optional arguments default to the contract's values (for example
    get_history's limit=50); `timeout=` overrides the client's default
    deadline for one call.
    """

    # -- MemoryService -------------------------------------------------------

    @unary
    def save_message(
        self,
        session_id: str,
        message: message_pb2.Message,
        *,
        idempotency_key: str = "",
        attributes: message_pb2.SessionAttributes | None = None,
        timeout: float | None = None,
    ) -> Call[memory_service_pb2.SaveMessageResponse]:
        """Appends one message; returns it with id, seq and timestamp.

        Without an idempotency key the client generates one, so a retry after
        a lost acknowledgement stores nothing twice. Pass your own (derived
        from your message's identity) to stay idempotent across processes.
        `attributes` (see session_attributes()) are merged into the session's
        in the same transaction.
        """
        request = memory_service_pb2.SaveMessageRequest(
            session_id=session_id, message=message, idempotency_key=idempotency_key, session_attributes=attributes
        )
        return Call("memory", "SaveMessage", request, _response, timeout)

    @unary
    def save_messages(
        self,
        session_id: str,
        messages: Iterable[message_pb2.Message],
        *,
        idempotency_key: str = "",
        attributes: message_pb2.SessionAttributes | None = None,
        timeout: float | None = None,
    ) -> Call[memory_service_pb2.SaveMessagesResponse]:
        """Appends a batch atomically (all or nothing). Idempotency and attributes as in save_message."""
        request = memory_service_pb2.SaveMessagesRequest(
            session_id=session_id,
            messages=list(messages),
            idempotency_key=idempotency_key,
            session_attributes=attributes,
        )
        return Call("memory", "SaveMessages", request, _response, timeout)

    @unary
    def get_history(
        self, session_id: str, limit: int = 50, *, timeout: float | None = None
    ) -> Call[list[message_pb2.Message]]:
        """The newest `limit` unarchived messages, oldest first."""
        request = memory_service_pb2.GetHistoryRequest(session_id=session_id, limit=limit)
        return Call("memory", "GetHistory", request, lambda r: list(r.messages), timeout)

    @unary
    def get_full_history(
        self, session_id: str, *, page_size: int = 100, page_token: str = "", timeout: float | None = None
    ) -> Call[memory_service_pb2.GetFullHistoryResponse]:
        """One page of every message (archived included), oldest first."""
        request = memory_service_pb2.GetFullHistoryRequest(
            session_id=session_id, page_size=page_size, page_token=page_token
        )
        return Call("memory", "GetFullHistory", request, _response, timeout)

    iter_full_history: pages[message_pb2.Message] = pages(get_full_history, "messages")

    @unary
    def list_messages_in_range(
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
    ) -> Call[memory_service_pb2.ListMessagesInRangeResponse]:
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
        return Call("memory", "ListMessagesInRange", request, _response, timeout)

    iter_messages_in_range: pages[message_pb2.Message] = pages(list_messages_in_range, "messages")

    @unary
    def get_recent_across_sessions(
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
    ) -> Call[list[message_pb2.SessionMessage]]:
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
        return Call("memory", "GetRecentAcrossSessions", request, lambda r: list(r.messages), timeout)

    @unary
    def trim_history(self, session_id: str, keep_recent: int, *, timeout: float | None = None) -> Call[int]:
        """Archives all but the newest `keep_recent` unarchived messages; returns how many."""
        request = memory_service_pb2.TrimHistoryRequest(session_id=session_id, keep_recent=keep_recent)
        return Call("memory", "TrimHistory", request, lambda r: r.archived_count, timeout)

    @unary
    def replace_history(
        self, session_id: str, messages: Iterable[message_pb2.Message], *, timeout: float | None = None
    ) -> Call[memory_service_pb2.ReplaceHistoryResponse]:
        """Atomically swaps the session's unarchived history for `messages`."""
        request = memory_service_pb2.ReplaceHistoryRequest(session_id=session_id, messages=list(messages))
        return Call("memory", "ReplaceHistory", request, _response, timeout)

    @unary
    def update_message_content(
        self, session_id: str, old_text: str, new_text: str, recent_limit: int = 100, *, timeout: float | None = None
    ) -> Call[int]:
        """Replaces old_text with new_text in the newest `recent_limit` messages; returns messages changed."""
        request = memory_service_pb2.UpdateMessageContentRequest(
            session_id=session_id, old_text=old_text, new_text=new_text, recent_limit=recent_limit
        )
        return Call("memory", "UpdateMessageContent", request, lambda r: r.changed_count, timeout)

    @unary
    def delete_messages_by_timestamps(
        self, session_id: str, timestamps: Iterable[int], *, timeout: float | None = None
    ) -> Call[int]:
        """Deletes the session's messages carrying any of `timestamps`; returns how many."""
        request = memory_service_pb2.DeleteMessagesByTimestampsRequest(
            session_id=session_id, timestamps=list(timestamps)
        )
        return Call("memory", "DeleteMessagesByTimestamps", request, lambda r: r.deleted_count, timeout)

    @unary
    def delete_messages(self, session_id: str, ids: Iterable[str], *, timeout: float | None = None) -> Call[int]:
        """Deletes messages by id (unknown ids are ignored); returns how many."""
        request = memory_service_pb2.DeleteMessagesRequest(session_id=session_id, ids=list(ids))
        return Call("memory", "DeleteMessages", request, lambda r: r.deleted_count, timeout)

    @unary
    def clear_session(
        self,
        session_id: str,
        targets: Sequence[memory_service_pb2.ClearTarget] = (),
        *,
        timeout: float | None = None,
    ) -> Call[list[memory_service_pb2.ClearResult]]:
        """Clears a session; empty `targets` means messages only. One result per target."""
        request = memory_service_pb2.ClearSessionRequest(session_id=session_id, targets=targets)
        return Call("memory", "ClearSession", request, lambda r: list(r.results), timeout)

    @unary
    def clear_all(
        self, targets: Sequence[memory_service_pb2.ClearTarget] = (), *, timeout: float | None = None
    ) -> Call[list[memory_service_pb2.ClearResult]]:
        """Clears every session of the tenant; empty `targets` means messages only."""
        request = memory_service_pb2.ClearAllRequest(targets=targets)
        return Call("memory", "ClearAll", request, lambda r: list(r.results), timeout)

    @unary
    def list_sessions(
        self,
        *,
        user_id: str = "",
        agent_id: str = "",
        labels: Mapping[str, str] | None = None,
        page_size: int = 100,
        page_token: str = "",
        active_since: int | None = None,
        active_before: int | None = None,
        timeout: float | None = None,
    ) -> Call[memory_service_pb2.ListSessionsResponse]:
        """One page of sessions holding messages or attributes, ordered by session id; only
        those of `user_id` / `agent_id` and carrying every one of `labels`, when given, and
        last written at or after `active_since` and before `active_before` (ms), when given."""
        request = memory_service_pb2.ListSessionsRequest(
            user_id=user_id, agent_id=agent_id, labels=dict(labels or {}), page_size=page_size, page_token=page_token
        )
        if active_since is not None:
            request.active_since = active_since
        if active_before is not None:
            request.active_before = active_before
        return Call("memory", "ListSessions", request, _response, timeout)

    iter_sessions: pages[memory_service_pb2.SessionInfo] = pages(list_sessions, "sessions")

    @unary
    def pop_messages(
        self, session_id: str, n: int = 1, *, timeout: float | None = None
    ) -> Call[memory_service_pb2.PopMessagesResponse]:
        """Atomically removes the newest `n` unarchived messages; `.messages` holds them, oldest
        first (the last is the newest), `.truncated` says the server's response byte bound
        removed fewer than `n` (at least one). Not retried: a second run would remove more."""
        request = memory_service_pb2.PopMessagesRequest(session_id=session_id, n=n)
        return Call("memory", "PopMessages", request, _response, timeout)

    @unary
    def get_session(
        self, session_id: str, *, timeout: float | None = None
    ) -> Call[memory_service_pb2.SessionInfo | None]:
        """The session's counts and attributes, or None when it holds no messages and no attributes."""
        request = memory_service_pb2.GetSessionRequest(session_id=session_id)
        return Call("memory", "GetSession", request, lambda r: r.session if r.found else None, timeout)

    @unary
    def update_session(
        self,
        session_id: str,
        attributes: message_pb2.SessionAttributes | None = None,
        *,
        remove_labels: Sequence[str] = (),
        timeout: float | None = None,
    ) -> Call[memory_service_pb2.SessionInfo]:
        """Merges `attributes` into the session's (creating it) and deletes `remove_labels`."""
        request = memory_service_pb2.UpdateSessionRequest(
            session_id=session_id, attributes=attributes, remove_labels=remove_labels
        )
        return Call("memory", "UpdateSession", request, lambda r: r.session, timeout)

    @unary
    def forget_user(self, user_id: str, *, timeout: float | None = None) -> Call[memory_service_pb2.ForgetUserResponse]:
        """Forgets a user: every session it owns, whole, and its entry scope. `.complete` false
        means the call stopped at its deadline with sessions left: call again to go on."""
        request = memory_service_pb2.ForgetUserRequest(user_id=user_id)
        return Call("memory", "ForgetUser", request, _response, timeout)

    @unary
    def get_caller(self, *, timeout: float | None = None) -> Call[memory_service_pb2.GetCallerResponse]:
        """Who this client's credential is: its tenant, its scopes ("memory:read", ...) and the
        end user it is bound to ("" for one that reaches the whole tenant)."""
        return Call("memory", "GetCaller", memory_service_pb2.GetCallerRequest(), _response, timeout)

    @unary
    def get_memory_stats(self, *, timeout: float | None = None) -> Call[memory_service_pb2.GetMemoryStatsResponse]:
        """The tenant's session and message counts and the retention settings in effect for it
        (a token bound to an end user is refused)."""
        return Call("memory", "GetMemoryStats", memory_service_pb2.GetMemoryStatsRequest(), _response, timeout)

    # -- MetadataService -----------------------------------------------------

    @unary
    def save_metadata(
        self, namespace: str, key: str, data: Mapping[str, Any], *, timeout: float | None = None
    ) -> Call[metadata_service_pb2.MetadataEntry]:
        """Creates or replaces the JSON object at (namespace, key)."""
        request = metadata_service_pb2.SaveMetadataRequest(namespace=namespace, key=key, data=to_struct(data))
        return Call("metadata", "SaveMetadata", request, lambda r: r.entry, timeout)

    @unary
    def get_metadata(
        self, namespace: str, key: str, *, timeout: float | None = None
    ) -> Call[metadata_service_pb2.MetadataEntry | None]:
        """The record at (namespace, key), or None when there is none."""
        request = metadata_service_pb2.GetMetadataRequest(namespace=namespace, key=key)
        return Call("metadata", "GetMetadata", request, lambda r: r.entry if r.found else None, timeout)

    @unary
    def list_metadata(
        self,
        namespace: str = "",
        *,
        namespace_prefix: str | None = None,
        page_size: int = 100,
        page_token: str = "",
        timeout: float | None = None,
    ) -> Call[metadata_service_pb2.ListMetadataResponse]:
        """One page of a namespace's records, ordered by key; or, with `namespace_prefix` (and
        no namespace), of every namespace starting with it, ordered by (namespace, key)."""
        request = metadata_service_pb2.ListMetadataRequest(
            namespace=namespace, namespace_prefix=namespace_prefix, page_size=page_size, page_token=page_token
        )
        return Call("metadata", "ListMetadata", request, _response, timeout)

    iter_metadata: pages[metadata_service_pb2.MetadataEntry] = pages(list_metadata, "entries")

    @unary
    def list_namespaces(
        self, prefix: str = "", *, page_size: int = 100, page_token: str = "", timeout: float | None = None
    ) -> Call[metadata_service_pb2.ListNamespacesResponse]:
        """One page of the distinct namespaces holding records (starting with `prefix`), in order."""
        request = metadata_service_pb2.ListNamespacesRequest(prefix=prefix, page_size=page_size, page_token=page_token)
        return Call("metadata", "ListNamespaces", request, _response, timeout)

    iter_namespaces: pages[str] = pages(list_namespaces, "namespaces")

    @unary
    def delete_metadata(self, namespace: str, key: str, *, timeout: float | None = None) -> Call[bool]:
        """Deletes one record; True when it existed."""
        request = metadata_service_pb2.DeleteMetadataRequest(namespace=namespace, key=key)
        return Call("metadata", "DeleteMetadata", request, lambda r: r.deleted, timeout)

    # -- EventService (Watch: see the clients' watch()) ----------------------

    @unary
    def publish_event(
        self,
        session_id: str,
        *,
        compress_requested: event_pb2.CompressRequested | None = None,
        compress_progress: event_pb2.CompressProgress | None = None,
        timeout: float | None = None,
    ) -> Call[event_pb2.Event]:
        """Publishes a caller-originated event (exactly one payload); returns it with seq and time."""
        request = event_service_pb2.PublishEventRequest(
            session_id=session_id, compress_requested=compress_requested, compress_progress=compress_progress
        )
        return Call("events", "PublishEvent", request, lambda r: r.event, timeout)

    # -- VectorService -------------------------------------------------------

    @unary
    def upsert_vectors(
        self, points: Iterable[vector_service_pb2.VectorPoint], *, timeout: float | None = None
    ) -> Call[list[str]]:
        """Stores vectors (a point per session + message + model, replaced on re-index); returns point ids."""
        request = vector_service_pb2.UpsertVectorsRequest(points=list(points))
        return Call("vectors", "UpsertVectors", request, lambda r: list(r.point_ids), timeout)

    @unary
    def search_memory(
        self,
        query_vector: Sequence[float] = (),
        *,
        query_text: str = "",
        model_id: str = "",
        top_k: int = 5,
        min_score: float = 0.0,
        time_weight: float | None = None,
        scope: vector_service_pb2.RecallScope = vector_service_pb2.RECALL_SCOPE_ALL,
        session_id: str = "",
        platform: str = "",
        speaker_ids: Sequence[str] = (),
        user_priority_boost: float = 2.0,
        recall_roles: vector_service_pb2.RecallRoles = vector_service_pb2.RECALL_ROLES_ALL,
        context_window: int = 2,
        expand_cross_session: bool = True,
        per_item_max_chars: int = 0,
        exclude_message_ids: Sequence[str] = (),
        control_kinds: Sequence[str] = (),
        keyword_weight: float | None = None,
        fusion: vector_service_pb2.RecallFusion = vector_service_pb2.RECALL_FUSION_UNSPECIFIED,
        reference_time: int | None = None,
        half_life_hours: float | None = None,
        keep_repeated_texts: bool = False,
        neighbor_weight: float | None = None,
        wait_for_event_seq: int = 0,
        timeout: float | None = None,
    ) -> Call[vector_service_pb2.SearchMemoryResponse]:
        """Recalls the messages that best match a query: by keywords (`query_text`), by
        meaning (`query_vector`, or `query_text` with a server embedder) or both fused,
        lifted by a matching adjacent message (`neighbor_weight`), reranked by recency
        (relative to `reference_time`, default now), each with its neighbours in its
        session; the same text said again is one hit (counted in its `repeats`) unless
        `keep_repeated_texts`. Unset ranking knobs take the server's defaults.

        Read-your-writes: pass a write's `event_seq` (SaveMessage(s)Response and the
        other write responses carry it) as `wait_for_event_seq`; the server searches
        once its recall index holds that write, or answers UNAVAILABLE (reason
        INDEX_BEHIND) at the deadline."""
        request = vector_service_pb2.SearchMemoryRequest(
            query_vector=query_vector,
            query_text=query_text,
            model_id=model_id,
            top_k=top_k,
            min_score=min_score,
            time_weight=time_weight,
            keyword_weight=keyword_weight,
            fusion=fusion,
            reference_time=reference_time,
            half_life_hours=half_life_hours,
            scope=scope,
            session_id=session_id,
            platform=platform,
            speaker_ids=speaker_ids,
            user_priority_boost=user_priority_boost,
            recall_roles=recall_roles,
            context_window=context_window,
            expand_cross_session=expand_cross_session,
            per_item_max_chars=per_item_max_chars,
            exclude_message_ids=exclude_message_ids,
            control_kinds=control_kinds,
            keep_repeated_texts=keep_repeated_texts,
            neighbor_weight=neighbor_weight,
            wait_for_event_seq=wait_for_event_seq,
        )
        return Call("vectors", "SearchMemory", request, _response, timeout)

    @unary
    def delete_vectors(
        self,
        session_id: str | None = None,
        *,
        timestamps: Sequence[int] | None = None,
        model_id: str | None = None,
        everything: bool = False,
        timeout: float | None = None,
    ) -> Call[int]:
        """Deletes the vectors of a session (of its `timestamps` only, when given), of a
        model, or `everything` of the tenant; exactly one selector. Returns how many."""
        request = vector_service_pb2.DeleteVectorsRequest()
        chosen = [session_id is not None, model_id is not None, everything]
        if sum(chosen) != 1 or (timestamps is not None and session_id is None):
            raise ValueError(
                "delete_vectors takes exactly one of session_id (with optional timestamps), model_id, everything"
            )
        if timestamps is not None:
            request.timestamps.session_id = str(session_id)  # not None: checked above
            request.timestamps.timestamps.extend(timestamps)
        elif session_id is not None:
            request.session.session_id = session_id
        elif model_id is not None:
            request.model.model_id = model_id
        else:
            request.all.SetInParent()
        return Call("vectors", "DeleteVectors", request, lambda r: r.deleted_count, timeout)

    @unary
    def get_vector_stats(self, *, timeout: float | None = None) -> Call[vector_service_pb2.GetVectorStatsResponse]:
        """The tenant's vectors per model and collection, and the background indexer's queue."""
        return Call("vectors", "GetVectorStats", vector_service_pb2.GetVectorStatsRequest(), _response, timeout)

    # -- SummaryService ------------------------------------------------------

    @unary
    def save_summary(
        self,
        session_id: str,
        from_seq: int,
        to_seq: int,
        text: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        vector: Sequence[float] = (),
        model_id: str = "",
        timeout: float | None = None,
    ) -> Call[summary_service_pb2.SaveSummaryResponse]:
        """Stores a summary of messages [from_seq, to_seq] and advances the session's cursor to to_seq;
        `vector` (of `model_id`) makes the slice searchable by meaning (search_summaries)."""
        request = summary_service_pb2.SaveSummaryRequest(
            session_id=session_id,
            from_seq=from_seq,
            to_seq=to_seq,
            text=text,
            metadata=to_struct(metadata),
            vector=vector,
            model_id=model_id,
        )
        return Call("summaries", "SaveSummary", request, _response, timeout)

    @unary
    def list_summaries(
        self, session_id: str, *, page_size: int = 100, page_token: str = "", timeout: float | None = None
    ) -> Call[summary_service_pb2.ListSummariesResponse]:
        """One page of the session's summary slices, oldest first."""
        request = summary_service_pb2.ListSummariesRequest(
            session_id=session_id, page_size=page_size, page_token=page_token
        )
        return Call("summaries", "ListSummaries", request, _response, timeout)

    iter_summaries: pages[summary_service_pb2.Summary] = pages(list_summaries, "summaries")

    @unary
    def get_summary_cursor(
        self, session_id: str, *, timeout: float | None = None
    ) -> Call[summary_service_pb2.GetSummaryCursorResponse]:
        """The session's summary cursor, slice count, latest slice and last seq."""
        request = summary_service_pb2.GetSummaryCursorRequest(session_id=session_id)
        return Call("summaries", "GetSummaryCursor", request, _response, timeout)

    @unary
    def search_summaries(
        self,
        query_text: str = "",
        *,
        query_vector: Sequence[float] = (),
        model_id: str = "",
        top_k: int = 5,
        session_id: str = "",
        keyword_weight: float | None = None,
        include_messages: bool = False,
        max_messages_per_hit: int = 0,
        timeout: float | None = None,
    ) -> Call[summary_service_pb2.SearchSummariesResponse]:
        """The summary slices that best match the query (in `session_id` only when given), each
        with its scores and, with `include_messages`, the messages it covers (bounded)."""
        request = summary_service_pb2.SearchSummariesRequest(
            query_text=query_text,
            query_vector=query_vector,
            model_id=model_id,
            top_k=top_k,
            scope=vector_service_pb2.RECALL_SCOPE_SESSION if session_id else vector_service_pb2.RECALL_SCOPE_ALL,
            session_id=session_id,
            include_messages=include_messages,
            max_messages_per_hit=max_messages_per_hit,
        )
        if keyword_weight is not None:
            request.keyword_weight = keyword_weight
        return Call("summaries", "SearchSummaries", request, _response, timeout)

    @unary
    def assemble_context(
        self,
        session_id: str,
        *,
        budget_chars: int = 0,
        recent_raw_n: int = 0,
        include_recall: bool = False,
        recall_top_k: int = 5,
        recall_query_vector: Sequence[float] = (),
        recall_model_id: str = "",
        timeout: float | None = None,
    ) -> Call[summary_service_pb2.AssembleContextResponse]:
        """The session's prompt context: latest summary, unsummarized tail, newest raw messages
        and optionally recalled memories, under `budget_chars` (0: unlimited)."""
        request = summary_service_pb2.AssembleContextRequest(
            session_id=session_id,
            budget_chars=budget_chars,
            recent_raw_n=recent_raw_n,
            include_recall=include_recall,
            recall_top_k=recall_top_k,
            recall_query_vector=recall_query_vector,
            recall_model_id=recall_model_id,
        )
        return Call("summaries", "AssembleContext", request, _response, timeout)

    # -- EntryService --------------------------------------------------------

    @unary
    def save_entry(
        self,
        scope: str,
        text: str,
        *,
        tags: Sequence[str] = (),
        embedding: Sequence[float] = (),
        model_id: str = "",
        key: str = "",
        timeout: float | None = None,
    ) -> Call[entry_service_pb2.SaveEntryResponse]:
        """Saves a long-term memory entry (a duplicate returns the stored one, `deduplicated`);
        with `key`, creates or replaces the key's one entry (`replaced`)."""
        request = entry_service_pb2.SaveEntryRequest(
            scope=scope, text=text, tags=tags, embedding=embedding, model_id=model_id, key=key
        )
        return Call("entries", "SaveEntry", request, _response, timeout)

    @unary
    def search_entries(
        self,
        scope: str,
        query: str = "",
        *,
        limit: int = 10,
        query_embedding: Sequence[float] = (),
        model_id: str = "",
        timeout: float | None = None,
    ) -> Call[entry_service_pb2.SearchEntriesResponse]:
        """Keyword (and, with embeddings, semantic) search of a scope; no query: the newest entries."""
        request = entry_service_pb2.SearchEntriesRequest(
            scope=scope, query=query, limit=limit, query_embedding=query_embedding, model_id=model_id
        )
        return Call("entries", "SearchEntries", request, _response, timeout)

    @unary
    def forget_entry(
        self, scope: str, entry_id: str = "", *, key: str = "", timeout: float | None = None
    ) -> Call[bool]:
        """Deletes one entry, by id or by the key it was saved with; True when it existed."""
        request = entry_service_pb2.ForgetEntryRequest(scope=scope, entry_id=entry_id, key=key)
        return Call("entries", "ForgetEntry", request, lambda r: r.deleted, timeout)

    @unary
    def list_entries(
        self, scope: str, *, page_size: int = 100, page_token: str = "", timeout: float | None = None
    ) -> Call[entry_service_pb2.ListEntriesResponse]:
        """One page of a scope's entries, newest first."""
        request = entry_service_pb2.ListEntriesRequest(scope=scope, page_size=page_size, page_token=page_token)
        return Call("entries", "ListEntries", request, _response, timeout)

    iter_entries: pages[entry_service_pb2.Entry] = pages(list_entries, "entries")

    # -- FormationService (memory the server forms: docs/MEMORY.md) -----------

    @unary
    def list_facts(
        self,
        user_id: str,
        *,
        session_id: str = "",
        include_superseded: bool = False,
        page_size: int = 100,
        page_token: str = "",
        timeout: float | None = None,
    ) -> Call[formation_service_pb2.ListFactsResponse]:
        """One page of the facts formed about a user, newest first (`session_id`: only facts
        from that session; `include_superseded`: superseded ones too, with valid_to)."""
        request = formation_service_pb2.ListFactsRequest(
            user_id=user_id,
            session_id=session_id,
            include_superseded=include_superseded,
            page_size=page_size,
            page_token=page_token,
        )
        return Call("formation", "ListFacts", request, _response, timeout)

    iter_facts: pages[formation_service_pb2.Fact] = pages(list_facts, "facts")

    @unary
    def get_profile(
        self, user_id: str, *, timeout: float | None = None
    ) -> Call[formation_service_pb2.UserProfile | None]:
        """The user's formed profile document, or None when none has formed."""
        request = formation_service_pb2.GetProfileRequest(user_id=user_id)
        return Call("formation", "GetProfile", request, lambda r: r.profile if r.HasField("profile") else None, timeout)

    @unary
    def update_fact(
        self,
        user_id: str,
        fact_id: str,
        text: str,
        *,
        category: str = "",
        keywords: Sequence[str] = (),
        event_time: int = 0,
        timeout: float | None = None,
    ) -> Call[formation_service_pb2.Fact]:
        """Corrects a fact (extraction never changes a corrected fact again); the fact as stored."""
        request = formation_service_pb2.UpdateFactRequest(
            user_id=user_id, fact_id=fact_id, text=text, category=category, keywords=keywords, event_time=event_time
        )
        return Call("formation", "UpdateFact", request, lambda r: r.fact, timeout)

    @unary
    def delete_fact(self, user_id: str, fact_id: str, *, timeout: float | None = None) -> Call[bool]:
        """Deletes a fact; True when it existed."""
        request = formation_service_pb2.DeleteFactRequest(user_id=user_id, fact_id=fact_id)
        return Call("formation", "DeleteFact", request, lambda r: r.deleted, timeout)

    @unary
    def list_custom_records(
        self,
        user_id: str,
        *,
        strategy: str = "",
        session_id: str = "",
        page_size: int = 100,
        page_token: str = "",
        timeout: float | None = None,
    ) -> Call[formation_service_pb2.ListCustomRecordsResponse]:
        """One page of the records custom strategies formed about a user, newest first
        (`strategy`: only that strategy's; `session_id`: only records from that session). A
        record's `value` is a google.protobuf.Struct: `to_dict(record)["value"]` is plain JSON."""
        request = formation_service_pb2.ListCustomRecordsRequest(
            user_id=user_id, strategy=strategy, session_id=session_id, page_size=page_size, page_token=page_token
        )
        return Call("formation", "ListCustomRecords", request, _response, timeout)

    iter_custom_records: pages[formation_service_pb2.CustomRecord] = pages(list_custom_records, "records")

    @unary
    def delete_custom_record(self, user_id: str, record_id: str, *, timeout: float | None = None) -> Call[bool]:
        """Deletes a custom record; True when it existed."""
        request = formation_service_pb2.DeleteCustomRecordRequest(user_id=user_id, record_id=record_id)
        return Call("formation", "DeleteCustomRecord", request, lambda r: r.deleted, timeout)

    @unary
    def get_formation_settings(
        self, *, session_id: str = "", timeout: float | None = None
    ) -> Call[formation_service_pb2.GetFormationSettingsResponse]:
        """The formation settings of the tenant (or of a session): as stored and in effect."""
        request = formation_service_pb2.GetFormationSettingsRequest(session_id=session_id)
        return Call("formation", "GetFormationSettings", request, _response, timeout)

    @unary
    def set_formation_settings(
        self,
        settings: formation_service_pb2.FormationSettings,
        *,
        session_id: str = "",
        timeout: float | None = None,
    ) -> Call[formation_service_pb2.FormationSettings]:
        """Replaces the formation settings of the tenant (or of a session); the settings in
        effect there now. Custom strategies: `FormationSettings(custom_strategies=
        CustomStrategies(strategies=[CustomStrategy(name=..., prompt=..., json_schema=...,
        enabled=True)]))`."""
        request = formation_service_pb2.SetFormationSettingsRequest(session_id=session_id, settings=settings)
        return Call("formation", "SetFormationSettings", request, lambda r: r.effective, timeout)

    @unary
    def wait_for_formation(
        self, event_seq: int, *, timeout_ms: int = 0, timeout: float | None = None
    ) -> Call[formation_service_pb2.WaitForFormationResponse]:
        """Returns once formation has processed the log through `event_seq` (a write's answer):
        read-your-writes for formed memory. DEADLINE_EXCEEDED (FORMATION_LAGGING) otherwise."""
        request = formation_service_pb2.WaitForFormationRequest(event_seq=event_seq, timeout_ms=timeout_ms)
        return Call("formation", "WaitForFormation", request, _response, timeout)

    @unary
    def get_formation_status(
        self, *, timeout: float | None = None
    ) -> Call[formation_service_pb2.GetFormationStatusResponse]:
        """Per strategy: position, lag, last error, model calls and tokens."""
        request = formation_service_pb2.GetFormationStatusRequest()
        return Call("formation", "GetFormationStatus", request, _response, timeout)
