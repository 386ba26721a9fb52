"""Property-based: random sequences of save / trim / delete / replace / update against a
small reference model of the message semantics (README, Message semantics), compared after every step, on both adapters.

The model is a list of messages of one session. What is compared after every step: each
operation's answer (ids, seqs, counts, deduplication) and the whole session (full history
with archived flags, and the GetHistory window).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis import given

from memoryd.domain.memory import DEFAULT_HISTORY_LIMIT, DEFAULT_RECENT_LIMIT_FOR_UPDATE
from memoryd.domain.models import Message

SESSION = "prop"
ROLES = ("user", "assistant", "tool")
KINDS = (None, "", "chat")


@dataclass
class Row:
    id: str
    seq: int
    role: str
    content: str
    kind: str | None
    timestamp: int
    archived: bool = False

    def key(self) -> tuple[int, int]:
        return (self.timestamp, self.seq)

    def view(self) -> tuple:
        return (self.id, self.seq, self.role, self.content, self.kind, self.timestamp, self.archived)


@dataclass
class Model:
    """The message semantics for one session, written as plainly as possible."""

    rows: list[Row] = field(default_factory=list)
    last_seq: int = 0
    keys: dict[str, list[str]] = field(default_factory=dict)  # idempotency key -> ids of the first result

    def ordered(self) -> list[Row]:
        return sorted(self.rows, key=Row.key)

    def unarchived(self) -> list[Row]:
        return [r for r in self.ordered() if not r.archived]

    def append(self, drafts: list[Message], stored: list[Message]) -> None:
        for draft, got in zip(drafts, stored, strict=True):
            self.last_seq += 1
            self.rows.append(Row(got.id, self.last_seq, draft.role, draft.content, draft.kind, draft.timestamp))

    def trim(self, keep: int) -> int:
        live = self.unarchived()
        doomed = live[: max(len(live) - keep, 0)]
        for row in doomed:
            row.archived = True
        return len(doomed)

    def delete(self, predicate) -> int:
        before = len(self.rows)
        self.rows = [r for r in self.rows if not predicate(r)]
        return before - len(self.rows)

    def update(self, old: str, new: str, recent_limit: int) -> int:
        newest = self.ordered()[-(recent_limit or DEFAULT_RECENT_LIMIT_FOR_UPDATE) :]
        changed = 0
        for row in newest:
            rewritten = row.content.replace(old, new)
            if rewritten != row.content:
                row.content = rewritten
                changed += 1
        return changed


# -- programs --------------------------------------------------------------------------

drafts = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(ROLES),
        content=st.text(alphabet="ab ", max_size=6),
        kind=st.sampled_from(KINDS),
        timestamp=st.integers(min_value=1, max_value=12),  # few values: many timestamp ties
    ),
    min_size=1,
    max_size=4,
)
operations = st.one_of(
    st.tuples(st.just("save"), drafts, st.sampled_from(["", "", "k1", "k2", "k3"])),
    st.tuples(st.just("trim"), st.integers(min_value=0, max_value=6)),
    st.tuples(st.just("delete_ts"), st.lists(st.integers(min_value=0, max_value=13), min_size=1, max_size=4)),
    st.tuples(st.just("delete_ids"), st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=4)),
    st.tuples(st.just("replace"), st.lists(drafts, max_size=1).map(lambda x: x[0] if x else [])),
    st.tuples(
        st.just("update"),
        st.text(alphabet="ab", min_size=1, max_size=2),
        st.text(alphabet="XY", max_size=2),
        st.integers(min_value=0, max_value=8),
    ),
)
programs = st.lists(operations, min_size=1, max_size=12)


async def _check_session(memory, tenant: str, model: Model) -> None:
    full, token = await memory.get_full_history(tenant, SESSION, 1000, "")
    assert token == ""
    assert [_view(m) for m in full] == [r.view() for r in model.ordered()]
    history = await memory.get_history(tenant, SESSION, 0)
    assert [m.id for m in history] == [r.id for r in model.unarchived()[-DEFAULT_HISTORY_LIMIT:]]
    window = await memory.get_history(tenant, SESSION, 2)
    assert [m.id for m in window] == [r.id for r in model.unarchived()[-2:]]
    # Range: inclusive bounds, archived included, exclude_kinds never drops a message without a kind.
    in_range, _ = await memory.list_in_range(tenant, SESSION, 3, 9, ["user", "tool"], ["chat", ""], 1000, "")
    expected = [
        r.id for r in model.ordered()
        if 3 <= r.timestamp <= 9 and r.role in ("user", "tool") and r.kind not in ("chat", "")
    ]
    assert [m.id for m in in_range] == expected


def _view(m: Message) -> tuple:
    return (m.id, m.seq, m.role, m.content, m.kind, m.timestamp, m.archived)


async def run_program(memory, program) -> None:
    tenant = f"prop-{uuid.uuid4().hex[:12]}"
    model = Model()
    for op, *args in program:
        if op == "save":
            batch, key = args
            result = await memory.save_messages(tenant, SESSION, batch, key)
            if key and key in model.keys:
                assert result.deduplicated and [m.id for m in result.messages] == model.keys[key]
            else:
                assert not result.deduplicated
                model.append(batch, result.messages)
                assert [m.seq for m in result.messages] == [r.seq for r in model.rows[-len(batch) :]]
                if key:
                    model.keys[key] = [m.id for m in result.messages]
        elif op == "trim":
            assert await memory.trim_history(tenant, SESSION, args[0]) == model.trim(args[0])
        elif op == "delete_ts":
            wanted = set(args[0])
            assert await memory.delete_by_timestamps(tenant, SESSION, args[0]) == model.delete(lambda r: r.timestamp in wanted)
        elif op == "delete_ids":
            # Indexes into every id ever stored (so some are gone already) plus unknown ids.
            known = [i for ids in model.keys.values() for i in ids] + [r.id for r in model.rows]
            ids = [known[i] if i < len(known) else f"unknown-{i}" for i in args[0]]
            wanted = set(ids)
            assert await memory.delete_by_ids(tenant, SESSION, ids) == model.delete(lambda r: r.id in wanted)
        elif op == "replace":
            batch = args[0]
            stored, removed = await memory.replace_history(tenant, SESSION, batch)
            assert removed == model.delete(lambda r: not r.archived)
            model.append(batch, stored)
        elif op == "update":
            old, new, limit = args
            assert await memory.update_message_content(tenant, SESSION, old, new, limit) == model.update(old, new, limit)
        await _check_session(memory, tenant, model)


COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@settings(max_examples=200, **COMMON)
@given(program=programs)
async def test_sqlite_matches_reference_model(sqlite_memory, program):
    await run_program(sqlite_memory, program)


@settings(max_examples=60, **COMMON)
@given(program=programs)
async def test_mongo_matches_reference_model(mongo_memory, program):
    await run_program(mongo_memory, program)
