"""What the strategies that form *sourced* records share (facts, custom strategies): a log
consumer that extracts records from each owned session's messages, with provenance (the ids of
the messages they came from), and makes forgetting reach them.

- messages appended: the session's messages after its extraction progress (per lane: facts
  have one, custom strategies one each), at most CHUNK_MESSAGES / CHUNK_CHARS a call, go to
  the model (`propose`); the server decides what to store (`decide`). The records and the
  moved progress are one guarded write (records.py): a batch is stored once or not at all.
- messages deleted (every delete path writes their ids: DeleteMessages, by timestamps,
  PopMessages, ReplaceHistory, ClearSession, ClearAll, ForgetUser, retention): each id leaves
  the sources of its records; a record with none left is removed (`released` says what else
  that undoes).
- messages rewritten (UpdateMessageContent) at or before a lane's progress: the message
  leaves the lane's records' sources as on a delete, and is extracted again alone, in one
  write (records of no lane left in the settings only lose it).

Sessions without an owner (user_id) form nothing. Every failure of the model raises: the
runtime keeps the cursor and retries the batch with backoff; nothing is skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Generic

from memoryd.consumers.runtime import Consumer
from memoryd.domain.errors import StorageUnavailable
from memoryd.domain.models import Event, EventType, Message, now_ms
from memoryd.domain.store import Store
from memoryd.formation import common
from memoryd.formation.meter import Meter
from memoryd.formation.records import Change, R, Source, SourcedRecords, memory_event
from memoryd.formation.settings import SettingsStore

log = logging.getLogger(__name__)

CHUNK_MESSAGES = 20
CHUNK_CHARS = 12_000
SEQ_MAX = 2**63 - 1
# A forget whose records keep changing in another process meanwhile is read again this often,
# then left to the runtime's retry with backoff.
FORGET_TRIES = 3


@dataclass(frozen=True, slots=True)
class Lane:
    """One extraction over a session's messages with a progress of its own: "" for facts, a
    custom strategy's name. `spec` is what the strategy needs to ask the model."""

    name: str
    enabled: bool
    spec: Any = None


@dataclass(frozen=True, slots=True)
class Batch:
    """One extraction call: the messages of a session (owned by `user`) for one lane."""

    tenant: str
    session_id: str
    user: str
    lane: Lane
    messages: Sequence[Message]
    to_seq: int


class SourcedConsumer(Consumer, Generic[R]):
    event_types: Collection[EventType] = (
        EventType.MESSAGES_APPENDED,
        EventType.MESSAGES_DELETED,
        EventType.MESSAGES_REWRITTEN,
    )
    batch = 2000  # events an apply takes: a backlog becomes few, large calls per session
    strategy = ""  # the meter's strategy name
    version = ""  # what the derived records hold: a change rebuilds them (the cursor's fingerprint)

    def __init__(
        self, store: Store, meter: Meter, settings: SettingsStore, locks: common.Locks, records: SourcedRecords[R]
    ) -> None:
        self.store = store
        self.meter = meter
        self.settings = settings
        self.locks = locks
        self.records = records

    def fingerprint(self) -> str:
        return self.version

    # -- what a strategy says ------------------------------------------------------------
    async def lanes(self, tenant: str, session_id: str) -> Sequence[Lane]:
        """The session's lanes as its settings say, enabled or not."""
        raise NotImplementedError

    def in_lane(self, record: R, lane: Lane) -> bool:
        return True

    async def propose(self, batch: Batch) -> Any:
        """The model's answer over the batch's messages (called outside the tenant's lock)."""
        raise NotImplementedError

    async def decide(self, batch: Batch, proposal: Any, change: Change, now: int) -> None:
        """Put into `change` what the server stores of the proposal (under the tenant's lock)."""
        raise NotImplementedError

    async def released(self, tenant: str, record: R, change: Change, now: int) -> None:
        """`record` lost its last source and is removed in `change`: undo what it caused."""

    def reset(self) -> None:
        """An apply or rebuild starts or ends: drop what was cached for it."""

    def committed(self, tenant: str, change: Change | None) -> None:
        """`change` was written (None: a write failed)."""

    # -- the log -------------------------------------------------------------------------
    async def apply(self, tenant: str, events: Sequence[Event]) -> None:
        """Events in order; consecutive appends of a session are extracted together."""
        self.reset()
        try:
            await self._apply(tenant, events)
        finally:
            self.reset()

    async def _apply(self, tenant: str, events: Sequence[Event]) -> None:
        pending: dict[str, int] = {}  # session -> newest appended seq not yet extracted
        for event in events:
            if event.type == EventType.MESSAGES_APPENDED:
                seqs = [int(r.get("seq") or 0) for r in event.payload.get("messages", ())]
                if seqs:
                    pending[event.session_id] = max(pending.get(event.session_id, 0), *seqs)
                continue
            # A delete or rewrite applies after the appends before it.
            if event.session_id in pending:
                await self.extract(tenant, event.session_id, pending.pop(event.session_id))
            if event.type == EventType.MESSAGES_DELETED:
                await self.forget(tenant, event.session_id, event.payload.get("ids", ()))
            elif event.type == EventType.MESSAGES_REWRITTEN:
                await self.rederive(tenant, event)
        for session_id, through in pending.items():
            await self.extract(tenant, session_id, through)
        self.meter.succeeded(tenant, self.strategy)

    async def rebuild(self, tenant: str) -> int | None:
        """Converge from the store: sources whose message is gone leave their records, then
        every session's messages after its progress are extracted."""
        self.reset()
        try:
            return await self._rebuild(tenant)
        finally:
            self.reset()

    async def _rebuild(self, tenant: str) -> int | None:
        latest = (await self.store.event_bounds(tenant))[1]
        for session_id in await self.records.indexed_sessions(tenant):
            gone: list[str] = []
            for message_id, user, record_id in await self.records.sources_of_session(tenant, session_id):
                rec = await self.records.get(tenant, user, record_id)
                source = next((s for s in rec.sources if s.message_id == message_id), None) if rec else None
                if source is None or not await self._stored(tenant, source):
                    gone.append(message_id)
            if gone:
                await self.forget(tenant, session_id, gone)
        after: str | None = None
        while True:
            sessions = await self.store.list_sessions(tenant, after, 100)
            for info in sessions:
                await self.extract(tenant, info.session_id, SEQ_MAX)
            if len(sessions) < 100:
                return latest
            after = sessions[-1].session_id

    async def _stored(self, tenant: str, source: Source) -> bool:
        rows = await self.store.messages_by_seq(tenant, source.session_id, source.seq, source.seq, 1)
        return bool(rows) and rows[0].id == source.message_id

    # -- extraction ----------------------------------------------------------------------
    async def extract(self, tenant: str, session_id: str, through: int) -> None:
        """Extract the session's messages after each enabled lane's progress through seq
        `through`. A session without an owner, or a lane that is off, is left as it is (no
        progress is written: once it has an owner and the lane on, its whole history is
        extracted for that owner)."""
        lanes = [lane for lane in await self.lanes(tenant, session_id) if lane.enabled]
        if not lanes or not await self._owner(tenant, session_id):
            return  # the settings first: a tenant without custom strategies costs no session read
        for lane in lanes:
            await self._extract(tenant, session_id, through, lane)

    async def _extract(self, tenant: str, session_id: str, through: int, lane: Lane) -> None:
        while True:
            progress = await self.records.progress(tenant, session_id, lane.name)
            done = int(progress["seq"]) if progress else 0
            if done >= through:
                return
            rows = await self.store.messages_by_seq(tenant, session_id, done + 1, through, CHUNK_MESSAGES)
            if not rows:
                last = min(through, await self.store.last_seq(tenant, session_id))
                if last <= done:
                    return
                async with self.locks(tenant):
                    await self.records.commit_progress(
                        tenant, session_id, progress, last, _event(progress), Change(), now_ms(), lane.name
                    )
                continue
            chunk: list[Message] = []
            chars = 0
            for message in rows:
                if chunk and chars + common.message_chars(message) > CHUNK_CHARS:
                    break
                chunk.append(message)
                chars += common.message_chars(message)
            # The read returned all there was through `through` when it was not full.
            to_seq = through if len(chunk) == len(rows) and len(rows) < CHUNK_MESSAGES else chunk[-1].seq
            if to_seq == SEQ_MAX:
                to_seq = chunk[-1].seq
            await self._batch(tenant, session_id, lane, progress, chunk, to_seq, _event(progress))

    async def _owner(self, tenant: str, session_id: str) -> str:
        info = await self.store.get_session(tenant, session_id)
        return info.attributes.user_id if info is not None else ""

    async def _batch(
        self,
        tenant: str,
        session_id: str,
        lane: Lane,
        progress: dict[str, Any] | None,
        messages: Sequence[Message],
        to_seq: int,
        event_seq: int,
        replacing: Sequence[str] = (),
    ) -> bool:
        """One model call over `messages` and its guarded write (with the removal of the
        message ids `replacing` from the lane's records: a rewrite). False when the progress
        moved."""
        user = await self._owner(tenant, session_id)
        candidates = [m for m in messages if m.role in common.PROMPT_ROLES and m.content.strip() and not m.archived]
        batch = Batch(tenant, session_id, user, lane, candidates, to_seq)
        proposal: Any = None
        if user and lane.enabled and candidates:
            proposal = await self.propose(batch)
        async with self.locks(tenant):
            now = now_ms()
            change = Change()
            if replacing:
                await self._unlink(tenant, session_id, replacing, change, now, reason="rederived", lane=lane)
            if proposal is not None:
                await self.decide(batch, proposal, change, now)
            written = await self.records.commit_progress(
                tenant, session_id, progress, to_seq, event_seq, change, now, lane.name
            )
            self.committed(tenant, change if written else None)
        if not written:
            # The progress, or a record the batch changes (a caller's correction in another
            # process), moved since it was read: decided again on what is stored now.
            log.info("formation %s: progress or a record moved under a batch; reading it again", self.strategy)
        return written

    # -- forgetting ----------------------------------------------------------------------
    async def forget(
        self, tenant: str, session_id: str, message_ids: Sequence[str], *, keep_lanes: Sequence[Lane] = ()
    ) -> None:
        """The messages leave their records' sources (those of `keep_lanes` excepted)."""
        if not message_ids:
            return
        for _ in range(FORGET_TRIES):
            async with self.locks(tenant):
                change = Change()
                now = now_ms()
                await self._unlink(tenant, session_id, message_ids, change, now, reason="sources_gone", keep=keep_lanes)
                written = await self.records.commit(tenant, change, now)
                self.committed(tenant, change if written else None)
            if written:
                return
            # A record changed in another process (a caller's correction) since it was read.
            log.info("formation %s: a record moved under a forget; reading it again", self.strategy)
        raise StorageUnavailable(
            "formed records kept changing during a forget; retried later", reason="FORMATION_UNAVAILABLE"
        )

    async def _unlink(
        self,
        tenant: str,
        session_id: str,
        message_ids: Sequence[str],
        change: Change,
        now: int,
        *,
        reason: str,
        lane: Lane | None = None,
        keep: Sequence[Lane] = (),
    ) -> None:
        """Take the messages out of their records' sources in `change` (only the records of
        `lane` when given, none of those of `keep`); a record left without sources is removed."""
        gone = set(message_ids)
        touched: dict[tuple[str, str], None] = {}
        for message_id in message_ids:
            for user, record_id in await self.records.by_message(tenant, session_id, message_id):
                touched[(user, record_id)] = None
        for user, record_id in touched:
            if record_id in change.records:
                before = change.records[record_id][1]  # as this change leaves it so far
            else:
                before = await self.records.get(tenant, user, record_id)
            if before is None or (lane is not None and not self.in_lane(before, lane)):
                continue
            if any(self.in_lane(before, kept) for kept in keep):
                continue
            left = tuple(s for s in before.sources if not (s.session_id == session_id and s.message_id in gone))
            if left:
                change.put(before, before.changed(now, sources=left))
                continue
            change.put(before, None)
            what = self.records.kind.what
            change.events.append(memory_event(EventType.MEMORY_REMOVED, what, record_id, user, reason=reason))
            await self.released(tenant, before, change, now)

    async def rederive(self, tenant: str, event: Event) -> None:
        """A rewrite of messages already extracted: they leave each lane's records and are
        extracted again (together, as they read now), one write per lane; records of a lane no
        longer in the settings only lose them."""
        lanes = await self.lanes(tenant, event.session_id)
        for lane in lanes:
            await self._rederive(tenant, event, lane)
        ids = [r.get("id", "") for r in event.payload.get("messages", ()) if r.get("id")]
        await self.forget(tenant, event.session_id, ids, keep_lanes=lanes)

    async def _rederive(self, tenant: str, event: Event, lane: Lane) -> None:
        refs = [(int(r.get("seq") or 0), r.get("id", "")) for r in event.payload.get("messages", ())]
        while True:
            progress = await self.records.progress(tenant, event.session_id, lane.name)
            if progress is None or int(progress.get("event", 0)) >= event.seq:
                return  # never extracted (the extraction reads the new content), or done
            done = int(progress["seq"])
            mine = [(seq, mid) for seq, mid in refs if mid and seq <= done]
            if not mine:
                return
            rows: list[Message] = []
            for seq, message_id in mine:
                rows += [
                    m
                    for m in await self.store.messages_by_seq(tenant, event.session_id, seq, seq, 1)
                    if m.id == message_id
                ]
            replacing = [mid for _, mid in mine]
            if await self._batch(tenant, event.session_id, lane, progress, rows, done, event.seq, replacing=replacing):
                return


def _event(progress: dict[str, Any] | None) -> int:
    return int(progress.get("event", 0)) if progress else 0
