"""Custom strategies: the caller's instruction and JSON schema (FormationSettings
.custom_strategies), each a lane of one sourced-records consumer (sourced.py: batching,
provenance, and forgetting that reaches the records on every delete path, rewrite, clear,
forget and expiry).

Each batch of a session's messages goes to the model once per enabled strategy, fenced as
untrusted data, with strict JSON-schema output in an envelope the server controls:

    {"records": [{"value": <the caller's schema>, "sources": [n, ...]}]}

`sources` are the numbers of the messages Mn a record comes from. The whole answer is checked
against the envelope (jsonschema: so every value against the caller's schema); an answer that
does not match, or a value over MAX_VALUE_BYTES, fails the call like any model fault: the
batch stays in the backlog and is retried, nothing of it is stored. The server decides what is
stored: a value equal (as canonical JSON) to a current record of the same user and strategy
adds the messages to that record's sources; sources outside the batch are dropped (all of the
batch's messages when none is left).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from memoryd.domain.models import EventType, now_ms
from memoryd.domain.store import Store
from memoryd.formation import common, llm
from memoryd.formation.meter import Meter
from memoryd.formation.records import Change, CustomRecord, CustomRecords, Source, canonical_json, memory_event
from memoryd.formation.records import new_fact_id as new_record_id
from memoryd.formation.settings import CustomStrategy, SettingsStore
from memoryd.formation.sourced import Batch, Lane, SourcedConsumer

STRATEGY = "custom"
NAME = "memoryd.formation.custom"
VERSION = "custom-1"
MAX_RECORDS_PER_CALL = 20
MAX_SOURCES = 64
MAX_VALUE_BYTES = 8192
_ENVELOPES = 64  # envelopes kept (one per distinct schema text)

SYSTEM = (
    "You extract records about the user from a conversation, as the instruction below says. "
    "Answer with a list of records; each has `value`, shaped by the given JSON schema, and "
    "`sources`: the numbers n of the messages Mn it comes from. Leave out anything the "
    "instruction does not ask for. An empty list is a fine answer. " + llm.DATA_RULE
)


def strict_compatible(node: Any) -> bool:
    """Whether every object of a schema says additionalProperties: false and requires all its
    properties (what OpenAI's strict structured output takes; other servers take any schema)."""
    if isinstance(node, list):
        return all(strict_compatible(v) for v in node)
    if not isinstance(node, dict):
        return True
    if node.get("type") == "object" or "properties" in node:
        properties = node.get("properties") or {}
        if node.get("additionalProperties") is not False or set(node.get("required") or ()) != set(properties):
            return False
    return all(strict_compatible(v) for k, v in node.items() if k not in ("enum", "const", "default", "examples"))


def envelope(schema: dict[str, Any]) -> dict[str, Any]:
    """The answer's schema: the caller's (its `$defs` moved to the root, where its
    "#/$defs/..." references point) as each record's value."""
    value = {k: v for k, v in schema.items() if k not in ("$defs", "$schema")}
    wrapped: dict[str, Any] = {
        "type": "object",
        "additionalProperties": False,
        "required": ["records"],
        "properties": {
            "records": {
                "type": "array",
                "maxItems": MAX_RECORDS_PER_CALL,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["value", "sources"],
                    "properties": {
                        "value": value,
                        "sources": {"type": "array", "maxItems": MAX_SOURCES, "items": {"type": "integer"}},
                    },
                },
            }
        },
    }
    if "$defs" in schema:
        wrapped["$defs"] = schema["$defs"]
    return wrapped


class CustomConsumer(SourcedConsumer[CustomRecord]):
    name = NAME
    strategy = STRATEGY
    version = VERSION
    records: CustomRecords

    def __init__(self, store: Store, meter: Meter, settings: SettingsStore, locks: common.Locks) -> None:
        super().__init__(store, meter, settings, locks, CustomRecords(store))
        # Schema text -> its envelope and whether it is strict-compatible: the same object for
        # every call, so llm's validator cache checks each schema once.
        self._envelopes: OrderedDict[str, tuple[dict[str, Any], bool]] = OrderedDict()

    async def lanes(self, tenant: str, session_id: str) -> Sequence[Lane]:
        strategies = (await self.settings.effective(tenant, session_id)).custom_strategies
        return tuple(Lane(s.name, s.enabled, s) for s in strategies)

    def in_lane(self, record: CustomRecord, lane: Lane) -> bool:
        return record.strategy == lane.name

    def _envelope(self, json_schema: str, schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        found = self._envelopes.get(json_schema)
        if found is None:
            found = self._envelopes[json_schema] = (envelope(schema), strict_compatible(schema))
            while len(self._envelopes) > _ENVELOPES:
                self._envelopes.popitem(last=False)
        self._envelopes.move_to_end(json_schema)
        return found

    async def propose(self, batch: Batch) -> list[dict[str, Any]]:
        spec: CustomStrategy = batch.lane.spec
        schema, strict = self._envelope(spec.json_schema, spec.schema)
        user = "Instruction:\n" + spec.prompt + "\n\nMessages:\n" + common.render(batch.messages)
        request = llm.ChatRequest(SYSTEM, user, "memoryd_custom_" + spec.name, schema, max_tokens=4096, strict=strict)
        answer = await self.meter.complete(batch.tenant, STRATEGY, request)
        items: list[dict[str, Any]] = answer.data.get("records", [])
        for item in items:
            if len(canonical_json(item["value"]).encode()) > MAX_VALUE_BYTES:
                usage = self.meter.usage(batch.tenant, STRATEGY)
                usage.failures, usage.last_error = usage.failures + 1, llm.INVALID_ANSWER
                raise llm.LlmFailed(llm.INVALID_ANSWER, f"a record's value is over {MAX_VALUE_BYTES} bytes")
        return items

    async def decide(self, batch: Batch, proposal: Any, change: Change, now: int) -> None:
        """Store each proposed value once per user and strategy (see the module's docstring).
        The user's records as stored now (under the tenant's lock): a deletion made during the
        model call holds."""
        strategy = batch.lane.name
        # value_json is canonical (records are written with canonical_json): no parsing needed.
        current = {r.value_json: r for r in await self.records.of_strategy(batch.tenant, batch.user, strategy)}
        for rec_id, (_, after) in change.records.items():  # a rewrite's unlinking went first
            for text in [t for t, r in current.items() if r.id == rec_id]:
                del current[text]
            if after is not None:
                current[after.value_json] = after
        for ordinal, item in enumerate(proposal):
            text = canonical_json(item["value"])
            numbers = [n for n in item.get("sources", ()) if isinstance(n, int) and 1 <= n <= len(batch.messages)]
            chosen = [batch.messages[n - 1] for n in dict.fromkeys(numbers)] or list(batch.messages)
            sources = tuple(Source(batch.session_id, m.id, m.seq) for m in chosen)
            same = current.get(text)
            if same is not None:
                merged = tuple(dict.fromkeys([*same.sources, *sources]))
                if merged != same.sources:
                    after = same.changed(now, sources=merged)
                    change.put(same, after)
                    current[text] = after
                continue
            rec = CustomRecord(
                id=new_record_id(now, batch.tenant, batch.session_id, strategy, batch.to_seq, ordinal, text),
                user_id=batch.user,
                strategy=strategy,
                value_json=text,
                sources=sources,
                create_time=now,
                update_time=now,
            )
            change.put(None, rec)
            current[text] = rec
            change.events.append(memory_event(EventType.MEMORY_FORMED, "custom", rec.id, batch.user))


async def delete_record(records: CustomRecords, locks: common.Locks, tenant: str, user_id: str, record_id: str) -> bool:
    """A caller's deletion of a record (and its provenance); False when the user has none such.
    The messages it came from are not extracted again (their progress passed them)."""
    async with locks(tenant):
        before = await records.get(tenant, user_id, record_id)
        if before is None:
            return False
        event = memory_event(EventType.MEMORY_REMOVED, "custom", record_id, user_id, reason="caller")
        return await records.commit_one(tenant, before, None, [event], now_ms())
