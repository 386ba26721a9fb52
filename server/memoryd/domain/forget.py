"""Forgetting whole sessions: ForgetUser (every session a user owns, the user's own metadata
namespaces and entry scope) and the retention task (sessions idle past their window,
domain/retention.py).

A session is forgotten in one store transaction, a ClearSession of every target with a
guard (store.SessionGuard) checked inside it: its messages, idempotency records, attributes,
the records keyed by its id, its summary slices and its summary cursor go together, with
the events of that clear (messages-deleted with the ids, session-cleared naming messages,
vectors and metadata, metadata-changed per record, session-updated), none of which carries
content. Its vectors follow through the MessageHooks, as after ClearSession. The session's
row stays with its counters only (seqs are never reused), unlisted.

ForgetUser is resumable: it pages through the user's sessions by the owner index, and a
forgotten session has no owner any more, so a call that stopped (its deadline, a crash
between two sessions) leaves exactly the sessions it had not reached for the next call.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from memoryd.domain import deadline, entries, erasure, prefixes, summaries
from memoryd.domain.hooks import MessageHooks
from memoryd.domain.models import ClearOutcome, ClearResult, ClearTarget, RangeQuery, now_ms
from memoryd.domain.sessions import SessionFilter
from memoryd.domain.store import Clearing, MetadataWrite, SessionChanged, SessionGuard, Store

# What the session-cleared event of a forgotten session names.
FORGET_TARGETS = ("messages", "vectors", "metadata")
# Sessions of a user read per listing page.
SESSION_PAGE = 100
# A call stops before a step while less than this long, or twice its slowest step so far, is
# left of its deadline (`complete` false: call again). The transport keeps the time the
# answer needs out of that deadline already.
MIN_RESERVE_SECONDS = 0.05
# Bytes of messages read per batch of a large session's deletion (their ids are what it needs).
BATCH_BYTES = 4 * 1024 * 1024

# Outcomes of clearing vectors, the one a combined result reports first.
_SEVERITY = (ClearOutcome.FAILED, ClearOutcome.DEFERRED, ClearOutcome.CLEARED, ClearOutcome.SKIPPED)


@dataclass(frozen=True, slots=True)
class ForgottenSession:
    messages: int
    metadata: int
    vectors: ClearResult


@dataclass(slots=True)
class Forgotten:
    """What a ForgetUser call removed (ForgetUserResponse)."""

    sessions: int = 0
    messages: int = 0
    metadata: int = 0
    entries: int = 0
    vectors: list[ClearResult] = field(default_factory=list)  # one, combined, once a session went
    complete: bool = True

    def add(self, session: ForgottenSession) -> None:
        self.sessions += 1
        self.messages += session.messages
        self.metadata += session.metadata
        self.vectors = [combined_vectors([*self.vectors, session.vectors], True)]


def combined_vectors(results: Sequence[ClearResult], has_vector_store: bool) -> ClearResult:
    """One vectors result for many session clears: the worst outcome (failed, then
    deferred), the points removed summed, the first error."""
    if not results:
        outcome = ClearOutcome.CLEARED if has_vector_store else ClearOutcome.SKIPPED
        return ClearResult(
            ClearTarget.VECTORS, outcome, error="" if has_vector_store else "no vector store is configured"
        )
    worst = min(results, key=lambda r: _SEVERITY.index(r.outcome))
    error = next((r.error for r in results if r.error), "")
    return ClearResult(ClearTarget.VECTORS, worst.outcome, sum(r.removed_count for r in results), error)


async def forget_session(
    store: Store, hooks: MessageHooks, tenant: str, session_id: str, guard: SessionGuard, now: int
) -> ForgottenSession | None:
    """Forget one session whole if `guard` still holds in its transaction; None when it does
    not (another owner, a write within the window), and then nothing was removed."""
    records = summaries.forgotten_records(session_id)
    clearing = Clearing(True, True, FORGET_TARGETS, records, guard, redact_events=True, release_owner=True)
    try:
        messages, metadata = await store.clear_session(tenant, session_id, clearing, now)
    except SessionChanged:
        return None
    await hooks.summaries_deleted(tenant, session_id, now)
    vectors = await hooks.clear_vectors(tenant, session_id)
    return ForgottenSession(messages, metadata, vectors)


async def forget_user(
    store: Store, hooks: MessageHooks, tenant: str, user_id: str, entry_scope: str, batch: int
) -> Forgotten:
    """Every session `user_id` owns, then the user's own metadata namespaces and the entries
    of `entry_scope` (the user's scope), then the events about them (domain/erasure.py).

    Stops early (complete false) when the caller's deadline comes near, but never before
    one step is done: every call makes progress, however short its deadline, and what it did
    stays (each step is its own transaction), so repeated calls always finish. A step is a
    session forgotten whole, or `batch` messages of a large one (deleted ahead of its
    clear, so that no transaction grows with the session), or one batch of the records,
    entries or events that follow."""
    forgotten = Forgotten()
    pace = Pace()
    after: str | None = None
    while True:
        page = await store.list_sessions(tenant, after, SESSION_PAGE, SessionFilter(user_id=user_id))
        for info in page:
            if not await _forget_owned(store, hooks, tenant, user_id, info.session_id, batch, pace, forgotten):
                forgotten.complete = False
                return forgotten
        if len(page) < SESSION_PAGE:
            break
        after = page[-1].session_id
    if "/" not in user_id:  # such a user has no namespaces of its own (prefixes.user_namespaces)
        removed = await forget_records(store, tenant, prefixes.user_namespaces(user_id), batch, pace)
        forgotten.metadata += removed or 0
        if removed is None:
            forgotten.complete = False
            return forgotten
    if pace.stop():
        forgotten.complete = False
        return forgotten
    with pace.step():
        forgotten.entries = await entries.forget_scope(store, tenant, entry_scope, batch)
    # Last, so that it also redacts the events of the deletions above (domain/erasure.py).
    while True:
        if pace.stop():
            forgotten.complete = False
            return forgotten
        with pace.step():
            if not await store.redact_events(tenant, user_redaction(user_id, entry_scope), batch):
                return forgotten


class Pace:
    """When a ForgetUser call stops: before a step, once it has done one, when less than
    twice its slowest step so far (at least MIN_RESERVE_SECONDS) is left before the
    caller's deadline (which the transport already set short of the client's, keeping time
    for the answer: transport/rpc.py)."""

    def __init__(self) -> None:
        self.steps = 0
        self.slowest = 0.0

    def stop(self) -> bool:
        left = deadline.remaining()
        return self.steps > 0 and left is not None and left < max(MIN_RESERVE_SECONDS, 2 * self.slowest)

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.steps += 1
            self.slowest = max(self.slowest, time.monotonic() - started)


async def _forget_owned(
    store: Store,
    hooks: MessageHooks,
    tenant: str,
    user_id: str,
    session_id: str,
    batch: int,
    pace: Pace,
    forgotten: Forgotten,
) -> bool:
    """Forget one of the user's sessions, its messages first in batches while it holds more
    than `batch`; False when the deadline stopped it (the session keeps its owner and what
    is left: the next call goes on)."""
    while True:
        if pace.stop():
            return False
        with pace.step():
            info = await store.get_session(tenant, session_id)
            if info is None or info.attributes.user_id != user_id:
                return True  # no longer the user's (forgotten meanwhile)
            if info.message_count <= batch:
                session = await forget_session(
                    store, hooks, tenant, session_id, SessionGuard(user_id=user_id), now_ms()
                )
                if session is not None:
                    forgotten.add(session)
                return True
            oldest = await store.range(tenant, RangeQuery(session_id, batch, max_bytes=BATCH_BYTES))
            removed = await store.delete_in(tenant, session_id, "id", [m.id for m in oldest], now_ms())
            await hooks.messages_deleted(tenant, session_id, removed)
            forgotten.messages += len(removed)


async def forget_records(store: Store, tenant: str, prefix: str, batch: int, pace: Pace | None = None) -> int | None:
    """Delete every record of the namespaces starting with `prefix`, `batch` per transaction
    (each with its metadata-changed events); returns how many went, None when `pace` stopped
    it first (the deadline: the next call goes on)."""
    removed = 0
    while True:
        if pace is not None and pace.stop():
            return None
        with pace.step() if pace is not None else contextlib.nullcontext():
            rows = await store.list_metadata_by_prefix(tenant, prefix, None, batch)
            if not rows:
                return removed
            deletes = [MetadataWrite(row.namespace, row.key, None) for row in rows]
            await store.write_metadata_guarded(tenant, deletes, None, [], now_ms())
            removed += len(rows)


def user_redaction(user_id: str, entry_scope: str) -> erasure.UserRedaction:
    """The tenant-wide events about `user_id`'s own records: its namespaces (when it has
    any), its entry scope's records and entry events."""
    own = (prefixes.user_namespaces(user_id),) if "/" not in user_id else ()
    return erasure.UserRedaction(
        namespace_prefixes=own,
        namespaces=(entries.entries_namespace(entry_scope),),
        records=((entries.COUNTER_NAMESPACE, entries.counter_key(entry_scope)),),
        entry_scopes=(entry_scope,),
        memory_user=user_id,
    )
