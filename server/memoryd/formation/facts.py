"""The facts strategy: a log consumer that extracts facts about each session's owner, with
provenance (the ids of the messages they came from), and makes forgetting reach them.

- messages appended: the session's messages after its extraction progress, at most
  CHUNK_MESSAGES / CHUNK_CHARS a call, go to the model with the user's related current facts
  (keyword overlap, labelled F1..Fn: the model never sees or writes a fact id). The model
  proposes each fact as new, a duplicate of Fk or superseding Fk; the server decides: a
  duplicate adds the messages to Fk's sources, a superseding fact keeps Fk with valid_to and
  superseded_by (never a corrected one), a text equal to a current fact is a duplicate
  whatever the model said, sources outside the batch are dropped. The facts and the moved
  progress are one guarded write (records.py): a batch is stored once or not at all.
- messages deleted (every delete path writes their ids: DeleteMessages, by timestamps,
  PopMessages, ReplaceHistory, ClearSession, ClearAll, ForgetUser, retention): each id leaves
  the sources of its facts; a fact with none left is removed, and the facts it had superseded
  are current again (the log no longer says otherwise).
- messages rewritten (UpdateMessageContent) at or before the progress: the message leaves
  its facts' sources as on a delete, and is extracted again alone, in one write.

Sessions without an owner (user_id) form no facts. Every failure of the model raises: the
runtime keeps the cursor and retries the batch with backoff; nothing is skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Any

from memoryd.consumers.runtime import Consumer
from memoryd.domain.models import Event, EventType, Message, now_ms
from memoryd.domain.store import Store
from memoryd.formation import common, llm
from memoryd.formation.meter import Meter
from memoryd.formation.records import Change, Fact, FactRecords, Source, memory_event, new_fact_id
from memoryd.formation.settings import SettingsStore

log = logging.getLogger(__name__)

STRATEGY = "facts"
NAME = "memoryd.formation.facts"
VERSION = "facts-1"
CHUNK_MESSAGES = 20
CHUNK_CHARS = 12_000
RELATED = 20
MAX_FACT_CHARS = 500
MAX_KEYWORDS = 16
MAX_KEYWORD_CHARS = 64
MAX_FACTS_PER_CALL = 20
CATEGORIES = ("preference", "biography", "plan", "event", "relationship", "opinion", "other")
SEQ_MAX = 2**63 - 1

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["facts"],
    "properties": {
        "facts": {
            "type": "array",
            "maxItems": MAX_FACTS_PER_CALL,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["text", "category", "event_date", "keywords", "sources", "action", "target"],
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": 2000},
                    "category": {"type": "string", "enum": list(CATEGORIES)},
                    "event_date": {"type": ["string", "null"]},
                    "keywords": {"type": "array", "maxItems": 64, "items": {"type": "string"}},
                    "sources": {"type": "array", "maxItems": 64, "items": {"type": "integer"}},
                    "action": {"type": "string", "enum": ["new", "duplicate", "supersedes"]},
                    "target": {"type": ["string", "null"]},
                },
            },
        }
    },
}

SYSTEM = (
    "You extract durable facts about the user from a conversation: preferences, biography, plans, "
    "events, relationships, opinions. Each fact is one short sentence about the user, in the "
    "language of the conversation, with a category, the date it refers to when the messages give "
    "one (YYYY-MM-DD, else null), a few keywords, and `sources`: the numbers n of the messages Mn "
    "it comes from. Known facts are labelled F1, F2, ...: when a fact is already known answer "
    "action 'duplicate' with target 'Fk'; when it replaces a known fact (the user changed their "
    "mind, moved, ...) answer action 'supersedes' with target 'Fk'; a fact may also duplicate or "
    "supersede an earlier fact of your own answer: target 'Nk' is the k-th fact of your list. "
    "Otherwise answer action 'new' with target null. Leave out small talk and anything not about "
    "the user. An empty list is a fine answer. " + llm.DATA_RULE
)


def _keywords(values: Sequence[str]) -> tuple[str, ...]:
    cleaned = (" ".join(v.split())[:MAX_KEYWORD_CHARS] for v in values)
    return tuple(dict.fromkeys(k for k in cleaned if k))[:MAX_KEYWORDS]


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def related(facts: Sequence[Fact], messages: Sequence[Message], limit: int = RELATED) -> list[Fact]:
    """The current facts most related to the messages, by shared words (all when few)."""
    if len(facts) <= limit:
        return list(facts)
    wanted = common.words(m.content for m in messages)
    scored = [(len(wanted & common.words([f.text, *f.keywords])), i, f) for i, f in enumerate(facts)]
    scored.sort(key=lambda row: (-row[0], row[1]))
    return [f for score, _, f in scored[:limit] if score > 0] or list(facts[:limit])


class FactsConsumer(Consumer):
    name = NAME
    event_types: Collection[EventType] = (
        EventType.MESSAGES_APPENDED,
        EventType.MESSAGES_DELETED,
        EventType.MESSAGES_REWRITTEN,
    )
    batch = 2000  # events an apply takes: a backlog becomes few, large calls per session

    def __init__(self, store: Store, meter: Meter, settings: SettingsStore, locks: common.Locks) -> None:
        self.store = store
        self.meter = meter
        self.settings = settings
        self.records = FactRecords(store)
        self.locks = locks
        self._cache: dict[tuple[str, str], list[Fact]] = {}  # (tenant, user) -> current facts, within an apply

    def fingerprint(self) -> str:
        return VERSION

    # -- the log ---------------------------------------------------------------
    async def _current(self, tenant: str, user: str) -> list[Fact]:
        """The user's current facts, read once per apply and kept up to date by its writes
        (an apply's sessions of one user do not read them again each)."""
        key = (tenant, user)
        if key not in self._cache:
            self._cache[key] = await self.records.facts(tenant, user)
        return self._cache[key]

    def _remember(self, tenant: str, change: Change | None) -> None:
        """Apply a written change to the cached facts (None: a write failed, forget them)."""
        if change is None:
            self._cache = {k: v for k, v in self._cache.items() if k[0] != tenant}
            return
        for before, after in change.facts.values():
            fact = after or before
            if fact is None or (tenant, fact.user_id) not in self._cache:
                continue
            cached = [f for f in self._cache[(tenant, fact.user_id)] if f.id != fact.id]
            if after is not None and after.current:
                cached.append(after)
            cached.sort(key=lambda f: f.id)  # ids sort newest first, as the store lists them
            self._cache[(tenant, fact.user_id)] = cached

    async def apply(self, tenant: str, events: Sequence[Event]) -> None:
        """Events in order; consecutive appends of a session are extracted together."""
        self._cache = {}
        try:
            await self._apply(tenant, events)
        finally:
            self._cache = {}

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
        self.meter.succeeded(tenant, STRATEGY)

    async def rebuild(self, tenant: str) -> int | None:
        """Converge from the store: sources whose message is gone leave their facts, then every
        session's messages after its progress are extracted."""
        self._cache = {}
        try:
            return await self._rebuild(tenant)
        finally:
            self._cache = {}

    async def _rebuild(self, tenant: str) -> int | None:
        latest = (await self.store.event_bounds(tenant))[1]
        for session_id in await self.records.indexed_sessions(tenant):
            gone: list[str] = []
            for message_id, user, fact_id in await self.records.sources_of_session(tenant, session_id):
                fact = await self.records.get(tenant, user, fact_id)
                source = next((s for s in fact.sources if s.message_id == message_id), None) if fact else None
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

    # -- extraction ------------------------------------------------------------
    async def extract(self, tenant: str, session_id: str, through: int) -> None:
        """Extract the session's messages after its progress through seq `through`. A session
        without an owner, or with facts off, is left as it is (no progress is written: once it
        has an owner and facts on, its whole history is extracted for that owner)."""
        if (
            not await self._owner(tenant, session_id)
            or not (await self.settings.effective(tenant, session_id)).facts_enabled
        ):
            return
        while True:
            progress = await self.records.progress(tenant, session_id)
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
                        tenant, session_id, progress, last, _event(progress), Change(), now_ms()
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
            await self._batch(tenant, session_id, progress, chunk, to_seq, _event(progress))

    async def _owner(self, tenant: str, session_id: str) -> str:
        info = await self.store.get_session(tenant, session_id)
        return info.attributes.user_id if info is not None else ""

    async def _batch(
        self,
        tenant: str,
        session_id: str,
        progress: dict[str, Any] | None,
        messages: Sequence[Message],
        to_seq: int,
        event_seq: int,
        replacing: Sequence[str] = (),
    ) -> bool:
        """One extraction call over `messages` and its guarded write (with the removal of the
        message ids `replacing` from their facts: a rewrite). False when the progress moved."""
        user = await self._owner(tenant, session_id)
        settings = await self.settings.effective(tenant, session_id)
        candidates = [m for m in messages if m.role in common.PROMPT_ROLES and m.content.strip() and not m.archived]
        answer: dict[str, Any] | None = None
        shown: list[Fact] = []
        if user and settings.facts_enabled and candidates:
            current = await self._current(tenant, user)
            shown = related(current, candidates)
            answer = (await self.meter.complete(tenant, STRATEGY, self._request(shown, candidates))).data
        async with self.locks(tenant):
            now = now_ms()
            change = Change()
            if replacing:
                await self._unlink(tenant, session_id, replacing, change, now, reason="rederived")
            if answer is not None:
                await self._decide(tenant, user, session_id, answer, shown, candidates, change, now, to_seq)
            written = await self.records.commit_progress(tenant, session_id, progress, to_seq, event_seq, change, now)
            self._remember(tenant, change if written else None)
        if not written:
            log.info("formation facts: progress moved under a batch; reading it again", extra={"tenant": tenant})
        return written

    @staticmethod
    def _request(shown: Sequence[Fact], messages: Sequence[Message]) -> llm.ChatRequest:
        known = "\n".join(f"F{i} ({f.category}): {f.text}" for i, f in enumerate(shown, 1)) or "(none)"
        user = "Known facts about the user:\n" + llm.fence(known) + "\n\nNew messages:\n" + common.render(messages)
        return llm.ChatRequest(SYSTEM, user, "memoryd_facts", SCHEMA, max_tokens=2048)

    async def _decide(
        self,
        tenant: str,
        user: str,
        session_id: str,
        answer: dict[str, Any],
        shown: Sequence[Fact],
        messages: Sequence[Message],
        change: Change,
        now: int,
        to_seq: int,
    ) -> None:
        """The server's decision on the model's proposals (see the module's docstring)."""
        labels = {f"F{i}": f.id for i, f in enumerate(shown, 1)}
        # The shown facts as stored now (under the tenant's lock), not as read before the model
        # call: a correction (UpdateFact) or deletion made meanwhile holds.
        state: dict[str, Fact] = {}  # as changed by this batch
        for shown_fact in shown:
            stored = await self.records.get(tenant, user, shown_fact.id)
            if stored is not None:
                state[stored.id] = stored
        for fact_id, (_, after) in change.facts.items():  # a rewrite's unlinking went first
            if after is None:
                state.pop(fact_id, None)
            elif fact_id in state:
                state[fact_id] = after
        by_text = {_normal(f.text): f.id for f in state.values() if f.current}
        for ordinal, item in enumerate(answer.get("facts", ())):
            text = llm.clip(" ".join(item["text"].split()), MAX_FACT_CHARS)
            if not text:
                continue
            numbers = [n for n in item.get("sources", ()) if isinstance(n, int) and 1 <= n <= len(messages)]
            chosen = [messages[n - 1] for n in dict.fromkeys(numbers)] or list(messages)
            sources = tuple(Source(session_id, m.id, m.seq) for m in chosen)
            label = (item.get("target") or "").strip()
            target = state.get(labels[label]) if label in labels else None
            action = item.get("action", "new")
            same = by_text.get(_normal(text))
            if same is not None and same in state:
                target, action = state[same], "duplicate"
            if action == "duplicate" and target is not None and target.current:
                merged = tuple(dict.fromkeys([*target.sources, *sources]))
                if merged != target.sources:
                    after = target.changed(now, sources=merged)
                    change.put(target, after)
                    state[target.id] = after
                continue
            fact = Fact(
                id=new_fact_id(now, tenant, session_id, to_seq, ordinal, text),
                user_id=user,
                text=text,
                category=item["category"] if item["category"] in CATEGORIES else "other",
                event_time=common.parse_date(item.get("event_date")),
                keywords=_keywords(item.get("keywords", ())),
                sources=sources,
                create_time=now,
                update_time=now,
            )
            labels[f"N{ordinal + 1}"] = fact.id  # the model's own earlier facts, as targets
            if fact.id in state:  # the same proposal twice in one answer
                continue
            change.put(None, fact)
            state[fact.id] = fact
            by_text[_normal(text)] = fact.id
            change.events.append(memory_event(EventType.MEMORY_FORMED, "fact", fact.id, user))
            if action == "supersedes" and target is not None and target.current and not target.corrected:
                after = target.changed(now, valid_to=now, superseded_by=fact.id)
                change.put(target, after)
                state[target.id] = after
                by_text.pop(_normal(target.text), None)
                change.events.append(
                    memory_event(EventType.MEMORY_SUPERSEDED, "fact", target.id, user, superseded_by=fact.id)
                )

    # -- forgetting --------------------------------------------------------------
    async def forget(self, tenant: str, session_id: str, message_ids: Sequence[str]) -> None:
        if not message_ids:
            return
        async with self.locks(tenant):
            change = Change()
            now = now_ms()
            await self._unlink(tenant, session_id, message_ids, change, now, reason="sources_gone")
            await self.records.commit(tenant, change, now)
            self._remember(tenant, change)

    async def _unlink(
        self, tenant: str, session_id: str, message_ids: Sequence[str], change: Change, now: int, *, reason: str
    ) -> None:
        """Take the messages out of their facts' sources in `change`; a fact left without
        sources is removed, and the facts it superseded become current again."""
        gone = set(message_ids)
        touched: dict[tuple[str, str], None] = {}
        for message_id in message_ids:
            for user, fact_id in await self.records.by_message(tenant, session_id, message_id):
                touched[(user, fact_id)] = None
        for user, fact_id in touched:
            if fact_id in change.facts:
                before = change.facts[fact_id][1]  # as this change leaves it so far
            else:
                before = await self.records.get(tenant, user, fact_id)
            if before is None:
                continue
            left = tuple(s for s in before.sources if not (s.session_id == session_id and s.message_id in gone))
            if left:
                change.put(before, before.changed(now, sources=left))
                continue
            change.put(before, None)
            change.events.append(memory_event(EventType.MEMORY_REMOVED, "fact", fact_id, user, reason=reason))
            for old in await self.records.facts(tenant, user, include_superseded=True):
                if old.superseded_by != fact_id:
                    continue
                pending = change.facts[old.id][1] if old.id in change.facts else old
                if pending is None:
                    continue
                change.put(pending, pending.changed(now, valid_to=0, superseded_by=""))

    async def rederive(self, tenant: str, event: Event) -> None:
        """A rewrite of messages already extracted: they leave their facts and are extracted
        again (together, as they read now), in one write."""
        refs = [(int(r.get("seq") or 0), r.get("id", "")) for r in event.payload.get("messages", ())]
        while True:
            progress = await self.records.progress(tenant, event.session_id)
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
            if await self._batch(tenant, event.session_id, progress, rows, done, event.seq, replacing=replacing):
                return


def _event(progress: dict[str, Any] | None) -> int:
    return int(progress.get("event", 0)) if progress else 0
