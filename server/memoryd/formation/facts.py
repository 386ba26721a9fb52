"""The facts strategy: a sourced-records consumer (sourced.py: batching, provenance, and
forgetting that reaches the facts on every delete path, rewrite, clear, forget and expiry)
that extracts facts about each session's owner.

Each batch goes to the model with the user's related current facts (keyword overlap, labelled
F1..Fn: the model never sees or writes a fact id). The model proposes each fact as new, a
duplicate of Fk or superseding Fk; the server decides: a duplicate adds the messages to Fk's
sources, a superseding fact keeps Fk with valid_to and superseded_by (never a corrected one),
a text equal to a current fact is a duplicate whatever the model said, sources outside the
batch are dropped. A fact removed because its sources are gone makes the facts it had
superseded current again (the log no longer says otherwise)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoryd.domain.models import EventType, Message
from memoryd.domain.store import Store
from memoryd.formation import common, llm
from memoryd.formation.meter import Meter
from memoryd.formation.records import Change, Fact, FactRecords, Source, memory_event, new_fact_id
from memoryd.formation.settings import SettingsStore
from memoryd.formation.sourced import Batch, Lane, SourcedConsumer

STRATEGY = "facts"
NAME = "memoryd.formation.facts"
VERSION = "facts-1"
RELATED = 20
MAX_FACT_CHARS = 500
MAX_KEYWORDS = 16
MAX_KEYWORD_CHARS = 64
MAX_FACTS_PER_CALL = 20
CATEGORIES = ("preference", "biography", "plan", "event", "relationship", "opinion", "other")

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


class FactsConsumer(SourcedConsumer[Fact]):
    name = NAME
    strategy = STRATEGY
    version = VERSION
    records: FactRecords

    def __init__(self, store: Store, meter: Meter, settings: SettingsStore, locks: common.Locks) -> None:
        super().__init__(store, meter, settings, locks, FactRecords(store))
        self._cache: dict[tuple[str, str], list[Fact]] = {}  # (tenant, user) -> current facts, within an apply

    async def lanes(self, tenant: str, session_id: str) -> Sequence[Lane]:
        return (Lane("", (await self.settings.effective(tenant, session_id)).facts_enabled),)

    def reset(self) -> None:
        self._cache = {}

    async def _current(self, tenant: str, user: str) -> list[Fact]:
        """The user's current facts, read once per apply and kept up to date by its writes
        (an apply's sessions of one user do not read them again each)."""
        key = (tenant, user)
        if key not in self._cache:
            self._cache[key] = await self.records.facts(tenant, user)
        return self._cache[key]

    def committed(self, tenant: str, change: Change | None) -> None:
        """Apply a written change to the cached facts (None: a write failed, forget them)."""
        if change is None:
            self._cache = {k: v for k, v in self._cache.items() if k[0] != tenant}
            return
        for before, after in change.records.values():
            fact = after or before
            if fact is None or (tenant, fact.user_id) not in self._cache:
                continue
            cached = [f for f in self._cache[(tenant, fact.user_id)] if f.id != fact.id]
            if after is not None and after.current:
                cached.append(after)
            cached.sort(key=lambda f: f.id)  # ids sort newest first, as the store lists them
            self._cache[(tenant, fact.user_id)] = cached

    # -- extraction ------------------------------------------------------------
    async def propose(self, batch: Batch) -> tuple[dict[str, Any], list[Fact]]:
        shown = related(await self._current(batch.tenant, batch.user), batch.messages)
        request = self._request(shown, batch.messages)
        return (await self.meter.complete(batch.tenant, STRATEGY, request)).data, shown

    @staticmethod
    def _request(shown: Sequence[Fact], messages: Sequence[Message]) -> llm.ChatRequest:
        known = "\n".join(f"F{i} ({f.category}): {f.text}" for i, f in enumerate(shown, 1)) or "(none)"
        user = "Known facts about the user:\n" + llm.fence(known) + "\n\nNew messages:\n" + common.render(messages)
        return llm.ChatRequest(SYSTEM, user, "memoryd_facts", SCHEMA, max_tokens=2048)

    async def decide(self, batch: Batch, proposal: Any, change: Change, now: int) -> None:
        """The server's decision on the model's proposals (see the module's docstring)."""
        tenant, user, session_id, messages = batch.tenant, batch.user, batch.session_id, batch.messages
        answer, shown = proposal
        labels = {f"F{i}": f.id for i, f in enumerate(shown, 1)}
        # The shown facts as stored now (under the tenant's lock), not as read before the model
        # call: a correction (UpdateFact) or deletion made meanwhile holds.
        state: dict[str, Fact] = {}  # as changed by this batch
        for shown_fact in shown:
            stored = await self.records.get(tenant, user, shown_fact.id)
            if stored is not None:
                state[stored.id] = stored
        for fact_id, (_, after) in change.records.items():  # a rewrite's unlinking went first
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
                id=new_fact_id(now, tenant, session_id, batch.to_seq, ordinal, text),
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
    async def released(self, tenant: str, record: Fact, change: Change, now: int) -> None:
        """The facts a removed fact had superseded are current again (the log no longer says
        otherwise)."""
        for old in await self.records.facts(tenant, record.user_id, include_superseded=True):
            if old.superseded_by != record.id:
                continue
            pending = change.records[old.id][1] if old.id in change.records else old
            if pending is None:
                continue
            change.put(pending, pending.changed(now, valid_to=0, superseded_by=""))
