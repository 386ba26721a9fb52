"""The rolling-summary strategy: a log consumer that summarizes each session's unsummarized
tail into summary slices (domain/summaries.py), so AssembleContext returns summary + tail with
no caller code.

- messages appended: while the tail after the session's summary cursor holds
  `summary_max_messages` messages or `summary_max_chars` characters, its oldest messages (up
  to those bounds) are summarized, with the previous slice as context, and saved as the slice
  [cursor + 1, last seq] with SaveSummary's compare-and-set on the cursor: a slice's identity
  is its range, so a retry (or a crash between the model's answer and the write) never makes
  two; a save the cursor moved under is read again, never forced.
- idleness (`sweep`, from the formation engine's timer): a session idle `summary_idle_seconds`
  with at least two unsummarized messages is summarized the same way.
- messages deleted or rewritten inside a formed slice's range: the slice is derived again from
  the messages left (same key and id, new text, a summary-saved event so the recall index
  follows), or removed when none is left.

Formed slices carry metadata["memoryd.formation"] = {"strategy": "summary", "message_count",
"model"}; slices a caller saved are never touched.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from memoryd.consumers.runtime import Consumer
from memoryd.domain import events as ev
from memoryd.domain.errors import Aborted, FailedPrecondition
from memoryd.domain.models import Event, EventType, Message, now_ms
from memoryd.domain.sessions import owner_stamps
from memoryd.domain.store import MetadataGuard, MetadataWrite, Store
from memoryd.domain.summaries import CURSOR_NAMESPACE, Summaries, Summary, cursor_key, slice_key, slices_namespace
from memoryd.formation import common, llm
from memoryd.formation.meter import Meter
from memoryd.formation.records import memory_event
from memoryd.formation.settings import Settings, SettingsStore

log = logging.getLogger(__name__)

STRATEGY = "summary"
NAME = "memoryd.formation.summary"
VERSION = "summary-1"
FORMED_KEY = "memoryd.formation"
MAX_SUMMARY_CHARS = 4000
SEQ_MAX = 2**63 - 1
_PAGE = 200
# The character threshold is checked once a tail holds this many messages (reading a tail's
# text on every append would cost more than the summaries).
CHARS_CHECK_FROM = 10
CAS_ATTEMPTS = 5

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary"],
    "properties": {"summary": {"type": "string", "minLength": 1, "maxLength": 20000}},
}

SYSTEM = (
    "You write the running summary of a conversation between a user and an assistant. Summarize "
    "the new messages in a few sentences, keeping names, decisions, facts about the user, open "
    "questions and dates; the earlier summary, when given, is context only (do not repeat it). "
    "Write in the language of the conversation, at most 1,500 characters. " + llm.DATA_RULE
)


def formed(summary: Summary) -> dict[str, Any] | None:
    meta = summary.metadata.get(FORMED_KEY)
    return meta if isinstance(meta, dict) and meta.get("strategy") == STRATEGY else None


class SummaryConsumer(Consumer):
    name = NAME
    event_types: Collection[EventType] = (
        EventType.MESSAGES_APPENDED,
        EventType.MESSAGES_DELETED,
        EventType.MESSAGES_REWRITTEN,
    )
    batch = 2000  # events an apply takes: a backlog becomes few, large calls per session

    def __init__(self, store: Store, summaries: Summaries, meter: Meter, settings: SettingsStore) -> None:
        self.store = store
        self.summaries = summaries
        self.meter = meter
        self.settings = settings

    def fingerprint(self) -> str:
        return VERSION

    async def apply(self, tenant: str, events: Sequence[Event]) -> None:
        appended: dict[str, None] = {}
        for event in events:
            if event.type == EventType.MESSAGES_APPENDED:
                appended[event.session_id] = None
            elif event.type == EventType.MESSAGES_DELETED:
                await self.rederive(tenant, event.session_id, None)
            elif event.type == EventType.MESSAGES_REWRITTEN:
                seqs = [int(r.get("seq") or 0) for r in event.payload.get("messages", ())]
                await self.rederive(tenant, event.session_id, seqs)
        for session_id in appended:
            await self.roll(tenant, session_id)
        self.meter.succeeded(tenant, STRATEGY)

    async def rebuild(self, tenant: str) -> int | None:
        latest = (await self.store.event_bounds(tenant))[1]
        after: str | None = None
        while True:
            sessions = await self.store.list_sessions(tenant, after, 100)
            for info in sessions:
                await self.rederive(tenant, info.session_id, None)
                await self.roll(tenant, info.session_id)
            if len(sessions) < 100:
                return latest
            after = sessions[-1].session_id

    # -- rolling ----------------------------------------------------------------
    async def roll(self, tenant: str, session_id: str, *, idle: bool = False) -> int:
        """Summarize the session's tail while it is past a threshold (`idle`: at least two
        messages); returns slices saved."""
        settings = await self.settings.effective(tenant, session_id)
        if not settings.summary_enabled:
            return 0
        saved = contended = 0
        while True:
            # Cheap first: the cursor record and a count; the tail's text only when it may be due.
            entry = await self.store.get_metadata(tenant, CURSOR_NAMESPACE, cursor_key(session_id))
            cursor = int(entry.data["cursor"]) if entry else 0
            waiting, _ = await self.store.count_by_seq(tenant, session_id, cursor + 1, SEQ_MAX)
            if not waiting or (waiting < min(settings.summary_max_messages, CHARS_CHECK_FROM) and not idle):
                return saved
            state = await self.summaries.get_cursor(tenant, session_id)
            rows = await self.store.messages_by_seq(
                tenant, session_id, state.cursor + 1, SEQ_MAX, settings.summary_max_messages
            )
            chunk = self._chunk(rows, settings, idle=idle and saved == 0)
            if not chunk:
                return saved
            # The earlier slice is context only when written under the session's owner now (or
            # before stamps): a slice the tenant wrote before giving the session to a user stays
            # the tenant's, never text of a slice stamped with the user (docs/SECURITY.md).
            stamp = (await owner_stamps(self.store, tenant, [session_id]))[session_id]
            latest = state.latest
            previous = latest.text if latest is not None and latest.owner in (None, stamp) else ""
            text = await self._summarize(tenant, chunk, previous)
            meta = {FORMED_KEY: {"strategy": STRATEGY, "message_count": len(chunk), "model": self.meter.model.model}}
            try:
                summary, _, deduplicated = await self.summaries.save(
                    tenant, session_id, state.cursor + 1, chunk[-1].seq, text, meta
                )
            except (FailedPrecondition, Aborted) as error:
                # The cursor moved under the call (another writer, a replay): read it again.
                log.info("formation summary: slice not saved (%s); reading the cursor again", error.reason)
                contended += 1
                if contended >= CAS_ATTEMPTS:
                    raise
                continue
            if not deduplicated:
                saved += 1
                user = await self._owner(tenant, session_id)
                await self.store.publish(
                    tenant, memory_event(EventType.MEMORY_FORMED, "summary", summary.id, user, session_id), now_ms()
                )

    @staticmethod
    def _chunk(rows: Sequence[Message], settings: Settings, *, idle: bool) -> list[Message]:
        chunk, chars = [], 0
        for message in rows:
            chunk.append(message)
            chars += common.message_chars(message)
            if chars >= settings.summary_max_chars:
                return chunk
        if len(chunk) >= settings.summary_max_messages or (idle and len(chunk) >= 2):
            return chunk
        return []

    async def _summarize(self, tenant: str, messages: Sequence[Message], previous: str) -> str:
        user = ""
        if previous:
            user = "Earlier summary:\n" + llm.fence(llm.clip(previous, MAX_SUMMARY_CHARS)) + "\n\n"
        user += "New messages:\n" + common.render(messages, numbered=False)
        request = llm.ChatRequest(SYSTEM, user, "memoryd_summary", SCHEMA, max_tokens=1024)
        answer = await self.meter.complete(tenant, STRATEGY, request)
        return llm.clip(answer.data["summary"].strip(), MAX_SUMMARY_CHARS) or "(empty)"

    async def _owner(self, tenant: str, session_id: str) -> str:
        info = await self.store.get_session(tenant, session_id)
        return info.attributes.user_id if info is not None else ""

    # -- idleness -------------------------------------------------------------------
    async def sweep(self, tenant: str, now: int, idle_seconds: int) -> int:
        """Summarize the tails of sessions idle for `idle_seconds` (the defaults'; sessions
        whose settings say otherwise are checked against theirs); returns slices saved."""
        saved = 0
        after: tuple[int, str] | None = None
        while True:
            sessions = await self.store.idle_sessions(tenant, now - idle_seconds * 1000, after, _PAGE, unarchived=True)
            for info in sessions:
                settings = await self.settings.effective(tenant, info.session_id)
                if settings.summary_idle_seconds and info.last_activity <= now - settings.summary_idle_seconds * 1000:
                    saved += await self.roll(tenant, info.session_id, idle=True)
            if len(sessions) < _PAGE:
                return saved
            after = (sessions[-1].last_activity, sessions[-1].session_id)

    # -- deletions and rewrites -----------------------------------------------------
    async def rederive(self, tenant: str, session_id: str, seqs: Sequence[int] | None) -> None:
        """Formed slices of the session that lost messages (seqs None) or hold a rewritten
        seq: derived again from the messages left, or removed when none is left."""
        after: str | None = None
        while True:
            rows = await self.store.list_metadata(tenant, slices_namespace(session_id), after, _PAGE)
            for row in rows:
                summary = Summary.from_record(session_id, row.data)
                meta = formed(summary)
                if meta is None:
                    continue
                present, _ = await self.store.count_by_seq(tenant, session_id, summary.from_seq, summary.to_seq)
                if seqs is None:
                    if present >= int(meta.get("message_count", 0)):
                        continue
                elif not any(summary.from_seq <= s <= summary.to_seq for s in seqs):
                    continue
                await self._rewrite(tenant, summary, meta, present)
            if len(rows) < _PAGE:
                return
            after = rows[-1].key

    async def _rewrite(self, tenant: str, summary: Summary, meta: dict[str, Any], present: int) -> None:
        session_id = summary.session_id
        namespace, key = slices_namespace(session_id), slice_key(summary.from_seq)
        guard = MetadataGuard(namespace, key, "id", summary.id)
        user = await self._owner(tenant, session_id)
        if present == 0:
            events = [
                memory_event(EventType.MEMORY_REMOVED, "summary", summary.id, user, session_id, reason="sources_gone")
            ]
            await self.store.write_metadata_guarded(
                tenant, [MetadataWrite(namespace, key, None)], guard, events, now_ms()
            )
            return
        messages = await self.store.messages_by_seq(tenant, session_id, summary.from_seq, summary.to_seq, present + 1)
        text = await self._summarize(tenant, messages, "")
        after = replace(
            summary,
            text=text,
            metadata={**summary.metadata, FORMED_KEY: {**meta, "message_count": len(messages)}},
            saved_message_count=len(messages),
        )
        events = [
            *ev.summary_saved(session_id, summary.id, summary.from_seq, summary.to_seq),
            memory_event(EventType.MEMORY_FORMED, "summary", summary.id, user, session_id, reason="rederived"),
        ]
        await self.store.write_metadata_guarded(
            tenant, [MetadataWrite(namespace, key, after.record())], guard, events, now_ms()
        )
