"""Message and metadata semantics: defaults, clamping, paging and batching over a Store.

Input has been validated by the transport before it reaches this layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memoryd.domain import forget, images, paging, sessions, summaries
from memoryd.domain.errors import FieldViolation, InvalidArgument
from memoryd.domain.events import vectors_cleared
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.limits import Limits
from memoryd.domain.models import (
    RESERVED_NAMESPACE_PREFIX,
    AppendResult,
    ClearOutcome,
    ClearResult,
    ClearTarget,
    Message,
    MetadataEntry,
    Position,
    RangeQuery,
    RecentQuery,
    SessionInfo,
    SessionMessage,
    now_ms,
)
from memoryd.domain.sessions import SessionAttributes, SessionFilter, SessionUpdate
from memoryd.domain.store import Clearing, Store

DEFAULT_HISTORY_LIMIT = 50
DEFAULT_FULL_HISTORY_PAGE = 100
DEFAULT_RANGE_PAGE = 1000
DEFAULT_LIST_PAGE = 100
DEFAULT_RECENT_LIMIT_FOR_UPDATE = 100


def _page_size(requested: int, default: int, maximum: int) -> int:
    return min(requested or default, maximum)


def _record_position(after: Any) -> tuple[str, str] | None:
    """A (namespace, key) page position from a token."""
    if after is None:
        return None
    if not (isinstance(after, list) and len(after) == 2 and all(isinstance(part, str) for part in after)):
        raise InvalidArgument(FieldViolation("page_token", "invalid page token: not a record position"))
    return after[0], after[1]


def _writable(namespace: str) -> None:
    """Callers read memoryd's own namespaces (summaries, cursors, entries) but never write
    them: only memoryd's services do, through the store."""
    if namespace.startswith(RESERVED_NAMESPACE_PREFIX):
        raise InvalidArgument(
            FieldViolation(
                "namespace", f"namespaces starting with {RESERVED_NAMESPACE_PREFIX!r} are written by memoryd only"
            )
        )


class Memory:
    def __init__(
        self,
        store: Store,
        limits: Limits,
        hooks: MessageHooks | None = None,
        *,
        downgrade_images: bool = False,
        page_tokens: paging.PageTokens | None = None,
        user_entry_scope: str = "{user}",
    ) -> None:
        self.store = store
        self.limits = limits
        self.hooks = hooks or MessageHooks()
        self.page_tokens = page_tokens or paging.PageTokens.ephemeral()
        # docs/CONTEXT.md: stored copies keep "[image <hash>]" instead of data: URIs and image URLs.
        self.downgrade_images = downgrade_images
        # The entry scope of end user {user} (MEMORYD_USER_ENTRY_SCOPE): what ForgetUser forgets.
        self.user_entry_scope = user_entry_scope

    # -- writes --------------------------------------------------------------
    async def save_messages(
        self,
        tenant: str,
        session_id: str,
        messages: Sequence[Message],
        idempotency_key: str = "",
        attributes: SessionAttributes | None = None,
        *,
        claimed_by: str | None = None,
    ) -> AppendResult:
        """Append; `claimed_by` (a user-bound caller's end user) makes the session that
        user's in the same transaction, or refuses it when it is another's (sessions.check_claim)."""
        if self.downgrade_images:
            messages = images.downgrade_messages(messages)
        attributes = attributes or SessionAttributes()
        update = self._session_update(attributes, claimed_by=claimed_by) if attributes or claimed_by else None
        result = await self.store.append(tenant, session_id, messages, idempotency_key or None, now_ms(), update)
        if not result.event_seq:  # deduplicated: the first write's events are at or before the newest
            result = replace(result, event_seq=await self.position(tenant))
        return result

    async def position(self, tenant: str) -> int:
        """The tenant's newest event seq: at or past every write that returned before this call
        (what write responses report as event_seq when the write does not know its own)."""
        return (await self.store.event_bounds(tenant))[1]

    def echoed(self, stored: Sequence[Message]) -> int:
        """How many of a write's stored messages its response carries whole: those whose
        stored bytes fit max_response_bytes, in order, none if the first alone does not
        (unlike a read's page, which always keeps one: a write's response must stay
        readable by a client with gRPC's default 4 MiB receive limit, the write is done
        either way). The others are echoed without content and body."""
        return paging.within(stored, self.limits.max_response_bytes)

    async def trim_history(self, tenant: str, session_id: str, keep_recent: int) -> int:
        return await self.store.trim(tenant, session_id, keep_recent, now_ms())

    async def replace_history(
        self, tenant: str, session_id: str, messages: Sequence[Message]
    ) -> tuple[list[Message], int]:
        if self.downgrade_images:
            messages = images.downgrade_messages(messages)
        stored, removed = await self.store.replace_history(tenant, session_id, messages, now_ms())
        await self.hooks.messages_deleted(tenant, session_id, removed)
        return stored, len(removed)

    async def update_message_content(
        self, tenant: str, session_id: str, old_text: str, new_text: str, recent_limit: int
    ) -> int:
        limit = recent_limit or DEFAULT_RECENT_LIMIT_FOR_UPDATE
        changed = await self.store.update_content(tenant, session_id, old_text, new_text, limit, now_ms())
        return len(changed)

    async def delete_by_timestamps(self, tenant: str, session_id: str, timestamps: Sequence[int]) -> int:
        unique = sorted(set(timestamps))
        return await self._delete_in_batches(tenant, session_id, unique, self.store.delete_by_timestamps)

    async def delete_by_ids(self, tenant: str, session_id: str, ids: Sequence[str]) -> int:
        unique = list(dict.fromkeys(ids))
        return await self._delete_in_batches(tenant, session_id, unique, self.store.delete_by_ids)

    async def pop_messages(self, tenant: str, session_id: str, n: int) -> tuple[list[Message], bool]:
        """Remove and return the newest `n` (0: 1) unarchived messages, oldest first: what
        GetHistory(n) returned at that instant. One transaction, so a concurrent append is
        either popped whole or left alone. Only the newest that fit max_response_bytes go
        (at least one); the flag says the bound stopped the pop before `n`."""
        removed, truncated = await self.store.pop_newest(
            tenant, session_id, n or 1, now_ms(), self.limits.max_response_bytes
        )
        await self.hooks.messages_deleted(tenant, session_id, removed)
        return removed, truncated

    async def _delete_in_batches(self, tenant: str, session_id: str, values: Sequence[Any], delete) -> int:
        # Each batch is its own transaction (with its own events) so one huge request
        # never holds the write lock for long.
        deleted = 0
        step = self.limits.delete_batch
        for start in range(0, len(values), step):
            removed = await delete(tenant, session_id, values[start : start + step], now_ms())
            await self.hooks.messages_deleted(tenant, session_id, removed)
            deleted += len(removed)
        return deleted

    async def clear(self, tenant: str, session_id: str | None, targets: Sequence[ClearTarget]) -> list[ClearResult]:
        """ClearSession (session_id given) or ClearAll (None); one result per target."""
        wanted = list(dict.fromkeys(targets or [ClearTarget.MESSAGES]))
        names = [t.name.lower() for t in wanted]
        messages = ClearTarget.MESSAGES in wanted
        metadata = ClearTarget.METADATA in wanted
        results: dict[ClearTarget, ClearResult] = {}
        if messages or metadata:
            now = now_ms()
            if session_id is None:
                clearing = Clearing(messages, metadata, names)
                removed, removed_meta = await self.store.clear_all(tenant, clearing, now)
            else:
                clearing = Clearing(messages, metadata, names, summaries.session_records(session_id))
                removed, removed_meta = await self.store.clear_session(tenant, session_id, clearing, now)
            if metadata:  # the summary slices went with the metadata
                await self.hooks.summaries_deleted(tenant, session_id, now)
            results[ClearTarget.MESSAGES] = ClearResult(ClearTarget.MESSAGES, ClearOutcome.CLEARED, removed)
            results[ClearTarget.METADATA] = ClearResult(ClearTarget.METADATA, ClearOutcome.CLEARED, removed_meta)
        if ClearTarget.VECTORS in wanted:
            if not (messages or metadata) and self.hooks.has_vector_store:
                # The clear goes into the log like every change the recall index follows
                # (with messages or metadata, the store's session-cleared event names it).
                await self.store.publish(tenant, vectors_cleared(session_id), now_ms())
            results[ClearTarget.VECTORS] = await self.hooks.clear_vectors(tenant, session_id)
        return [results[t] for t in wanted]

    async def forget_user(self, tenant: str, user_id: str) -> tuple[forget.Forgotten, ClearResult, int]:
        """ForgetUser (domain/forget.py): what went, the vectors' combined result, and the
        call's event_seq (the log's newest seq once it is done: at or past its last event)."""
        scope = self.user_entry_scope.replace("{user}", user_id)
        forgotten = await forget.forget_user(self.store, self.hooks, tenant, user_id, scope, self.limits.delete_batch)
        vectors = forget.combined_vectors(forgotten.vectors, self.hooks.has_vector_store)
        return forgotten, vectors, (await self.store.event_bounds(tenant))[1]

    # -- reads ---------------------------------------------------------------
    async def get_history(self, tenant: str, session_id: str, limit: int) -> list[Message]:
        return (await self.history_window(tenant, session_id, limit))[0]

    async def history_window(self, tenant: str, session_id: str, limit: int) -> tuple[list[Message], bool]:
        """GetHistory: the newest messages, oldest first, and whether max_response_bytes left
        out older ones within `limit` (the store reads newest first, so the newest are kept)."""
        size = _page_size(limit, DEFAULT_HISTORY_LIMIT, self.limits.max_page_size)
        rows = await self.store.history(tenant, session_id, size, self.limits.max_response_bytes)
        kept, truncated = paging.fit(rows[::-1], size, self.limits.max_response_bytes)
        return kept[::-1], truncated

    async def get_full_history(
        self, tenant: str, session_id: str, page_size: int, page_token: str
    ) -> tuple[list[Message], str]:
        query = RangeQuery(session_id, _page_size(page_size, DEFAULT_FULL_HISTORY_PAGE, self.limits.max_page_size))
        return await self._range_page(tenant, query, page_token, ("full", session_id))

    async def list_in_range(
        self,
        tenant: str,
        session_id: str,
        from_ts: int,
        to_ts: int,
        roles: Sequence[str],
        exclude_kinds: Sequence[str],
        page_size: int,
        page_token: str,
    ) -> tuple[list[Message], str]:
        query = RangeQuery(
            session_id,
            _page_size(page_size, DEFAULT_RANGE_PAGE, self.limits.max_page_size),
            from_ts=from_ts,
            to_ts=to_ts,
            roles=tuple(roles),
            exclude_kinds=tuple(exclude_kinds),
        )
        scope = ("range", session_id, from_ts, to_ts, sorted(roles), sorted(exclude_kinds))
        return await self._range_page(tenant, query, page_token, scope)

    async def _range_page(
        self, tenant: str, query: RangeQuery, page_token: str, scope: tuple[Any, ...]
    ) -> tuple[list[Message], str]:
        position = await self.page_tokens.decode(tenant, scope, page_token)
        if position is not None:
            query = replace(query, after=Position(position["ts"], position["seq"]))
        # One extra row tells whether another page exists without a count query; the
        # byte bound ends a page early (max_response_bytes, paging.fit).
        max_bytes = self.limits.max_response_bytes
        rows = await self.store.range(tenant, replace(query, limit=query.limit + 1, max_bytes=max_bytes))
        page, more = paging.fit(rows, query.limit, max_bytes)
        if not more:
            return page, ""
        last = page[-1]
        return page, await self.page_tokens.encode(tenant, scope, {"ts": last.timestamp, "seq": last.seq})

    async def recent_across_sessions(self, tenant: str, query: RecentQuery) -> list[SessionMessage]:
        return (await self.recent_window(tenant, query))[0]

    async def recent_window(self, tenant: str, query: RecentQuery) -> tuple[list[SessionMessage], bool]:
        """As history_window: the newest matches that fit max_response_bytes, and whether any were left out."""
        if query.session_ids is not None and not query.session_ids:  # a user-bound caller with no sessions
            return [], False
        limit = min(query.limit, self.limits.max_recent_limit)
        max_bytes = self.limits.max_response_bytes
        rows = await self.store.recent_across_sessions(tenant, replace(query, limit=limit, max_bytes=max_bytes))
        kept, truncated = paging.fit([r.message for r in reversed(rows)], limit, max_bytes)
        return rows[len(rows) - len(kept) :], truncated

    async def _keyed_page(
        self, tenant: str, scope: tuple[Any, ...], page_size: int, page_token: str, fetch, key_of, *, bounded: bool
    ):
        """A page of a listing ordered by a unique key (a string, or a list of strings that
        compares in order); the token holds the last key.

        `fetch(after, limit, max_bytes)` reads with the byte bound of paging.fit when `bounded`.
        """
        size = _page_size(page_size, DEFAULT_LIST_PAGE, self.limits.max_page_size)
        position = await self.page_tokens.decode(tenant, scope, page_token)
        max_bytes = self.limits.max_response_bytes if bounded else None
        rows = await fetch(position["after"] if position else None, size + 1, max_bytes)
        page, more = paging.fit(rows, size, max_bytes)
        if not more:
            return page, ""
        return page, await self.page_tokens.encode(tenant, scope, {"after": key_of(page[-1])})

    async def list_sessions(
        self, tenant: str, page_size: int, page_token: str, where: SessionFilter = SessionFilter()
    ) -> tuple[list[SessionInfo], str]:
        # Bounded: a session's labels may hold up to max_filter_items keys and values.
        return await self._keyed_page(
            tenant,
            ("sessions", *where.scope()),
            page_size,
            page_token,
            lambda after, limit, max_bytes: self.store.list_sessions(tenant, after, limit, where, max_bytes),
            lambda info: info.session_id,
            bounded=True,
        )

    # -- session attributes --------------------------------------------------
    def _session_update(
        self, attributes: SessionAttributes, remove_labels: Sequence[str] = (), *, claimed_by: str | None = None
    ) -> SessionUpdate:
        if claimed_by is not None:
            attributes = replace(attributes, user_id=claimed_by)
        return SessionUpdate(
            attributes, tuple(remove_labels), max_labels=self.limits.max_filter_items, claim=claimed_by is not None
        )

    async def get_session(self, tenant: str, session_id: str) -> SessionInfo | None:
        info = await self.store.get_session(tenant, session_id)
        return info if info is not None and sessions.listed(info.message_count, info.attributes) else None

    async def session_totals(self, tenant: str) -> sessions.SessionTotals:
        """The tenant's listed sessions and their messages, counted (GetMemoryStats)."""
        return await self.store.session_totals(tenant)

    async def update_session(
        self,
        tenant: str,
        session_id: str,
        attributes: SessionAttributes,
        remove_labels: Sequence[str],
        *,
        claimed_by: str | None = None,
    ) -> SessionInfo:
        """As save_messages, `claimed_by` makes the session that user's or refuses it."""
        update = self._session_update(attributes, remove_labels, claimed_by=claimed_by)
        return await self.store.update_session(tenant, session_id, update, now_ms())

    # -- metadata ------------------------------------------------------------
    async def save_metadata(self, tenant: str, namespace: str, key: str, data: dict[str, Any]) -> MetadataEntry:
        _writable(namespace)
        return await self.store.save_metadata(tenant, namespace, key, data, now_ms())

    async def get_metadata(self, tenant: str, namespace: str, key: str) -> MetadataEntry | None:
        return await self.store.get_metadata(tenant, namespace, key)

    async def list_metadata(
        self, tenant: str, namespace: str, page_size: int, page_token: str
    ) -> tuple[list[MetadataEntry], str]:
        return await self._keyed_page(
            tenant,
            ("metadata", namespace),
            page_size,
            page_token,
            lambda after, limit, max_bytes: self.store.list_metadata(tenant, namespace, after, limit, max_bytes),
            lambda entry: entry.key,
            bounded=True,
        )

    async def delete_metadata(self, tenant: str, namespace: str, key: str) -> bool:
        _writable(namespace)
        return await self.store.delete_metadata(tenant, namespace, key, now_ms())

    async def list_metadata_by_prefix(
        self, tenant: str, prefix: str, page_size: int, page_token: str
    ) -> tuple[list[MetadataEntry], str]:
        return await self._keyed_page(
            tenant,
            ("metadata-prefix", prefix),
            page_size,
            page_token,
            lambda after, limit, max_bytes: self.store.list_metadata_by_prefix(
                tenant, prefix, _record_position(after), limit, max_bytes
            ),
            lambda entry: [entry.namespace, entry.key],
            bounded=True,
        )

    async def list_namespaces(self, tenant: str, prefix: str, page_size: int, page_token: str) -> tuple[list[str], str]:
        # Namespaces are names (at most max_id_length characters): no byte bound needed.
        return await self._keyed_page(
            tenant,
            ("namespaces", prefix),
            page_size,
            page_token,
            lambda after, limit, _: self.store.list_namespaces(tenant, prefix, after, limit),
            lambda namespace: namespace,
            bounded=False,
        )
