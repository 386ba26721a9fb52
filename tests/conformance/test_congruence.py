"""Congruence: random programs of store operations run on the SQLite adapter (the
reference) and on the MongoDB adapter, and every result and the whole event log must match
after every step (qdrant-client's congruence tests, applied to our two message stores).

The shared conformance cases (the other files here) check each adapter against expected
values; this suite checks the two against each other on sequences nobody wrote by hand.
"""

from __future__ import annotations

import random
import uuid

import pytest

from memoryd.domain.models import EventDraft, EventType, Message, Position, RangeQuery, RecentQuery
from memoryd.domain.store import Clearing, MetadataGuard, MetadataWrite
from memoryd.storage.mongo.store import MongoStore
from memoryd.storage.sqlite.store import SqliteStore
from tests.conftest import mongo_targets, mongo_uri_for

pytestmark = pytest.mark.mongo


@pytest.fixture(scope="module", params=mongo_targets())
def mongo_uri(request) -> str:
    return mongo_uri_for(request.param, request)


# -- congruence with the SQLite reference ----------------------------------------------
# Random operation sequences run against both adapters; every result and the whole event
# log must match. Message ids are random, so they are compared as "session:seq" labels.
SESSIONS = ["a", "b", "c"]
ROLES = ["user", "assistant", "system", "tool"]
KINDS = [None, "", "k1", "control"]


def _label(value, ids: dict[str, str]):
    if isinstance(value, Message):
        return _label(value.to_dict(), ids)
    if isinstance(value, (list, tuple)):
        return type(value)(_label(v, ids) for v in value)
    if isinstance(value, dict):
        labelled = {k: _label(v, ids) for k, v in value.items()}
        if isinstance(value.get("id"), str):
            labelled["id"] = ids.get(value["id"], value["id"])
        if "ids" in value:
            labelled["ids"] = [ids.get(i, i) for i in value["ids"]]
        return labelled
    if hasattr(value, "__dataclass_fields__"):
        fields = [name for name, spec in value.__dataclass_fields__.items() if spec.compare]  # not stored_bytes
        return type(value).__name__, {f: _label(getattr(value, f), ids) for f in fields}
    return value


def _random_step(rnd):
    """One operation as (name, session, call(store, ids, now)); `ids` maps label -> id in that store."""
    def message():
        platform = rnd.choice([None, "qq", "tg"])
        return Message(
            role=rnd.choice(ROLES),
            content=rnd.choice(["hello world", "foo", "hello", "x"]),
            kind=rnd.choice(KINDS),
            timestamp=rnd.choice([0, rnd.randint(1, 30)]),
            metadata={"platform": platform} if platform else {},
        )

    def fresh(messages):
        return [Message.from_dict(m.to_dict()) for m in messages]

    sample = lambda pool, most: tuple(rnd.sample(pool, rnd.randint(0, most)))  # noqa: E731
    t, s = "T", rnd.choice(SESSIONS)
    batch = [message() for _ in range(rnd.randint(1, 4))]
    key = rnd.choice([None, "k1", "k2"])
    labels = [f"{s}:{n}" for n in rnd.sample(range(1, 30), 6)]
    range_query = RangeQuery(
        s,
        rnd.randint(1, 10),
        after=rnd.choice([None, Position(rnd.randint(0, 30), rnd.randint(0, 10))]),
        from_ts=rnd.choice([None, rnd.randint(0, 20)]),
        to_ts=rnd.choice([None, rnd.randint(5, 30)]),
        roles=sample(ROLES, 2),
        exclude_kinds=sample(["", "k1", "control"], 2),
    )
    recent_query = RecentQuery(
        limit=rnd.randint(1, 12),
        since_ts=rnd.choice([None, rnd.randint(0, 20)]),
        platform=rnd.choice([None, "qq", "tg"]),
        exclude_session_ids=sample(SESSIONS, 1),
        roles=sample(ROLES, 3),
        kinds=sample(["", "k1", "control"], 1),
        exclude_kinds=sample(["", "k1", "control"], 1),
    )
    n, lo, hi, flag, flag2 = rnd.randint(0, 6), rnd.randint(0, 5), rnd.randint(3, 20), rnd.random() < 0.5, rnd.random() < 0.5
    timestamps, after = rnd.sample(range(40), 5), rnd.choice([None, "a", "b"])
    namespace, record = rnd.choice(["n1", "n2"]), rnd.choice([*SESSIONS, "x"])
    guard = rnd.choice([None, MetadataGuard("n1", "g", "v", None), MetadataGuard("n1", "g", "v", rnd.randint(0, 3))])
    writes = [MetadataWrite("n1", "g", {"v": rnd.randint(0, 3)}), MetadataWrite("n2", rnd.choice(SESSIONS), rnd.choice([None, {"w": 1}]))]
    ops = {
        "append": lambda st, ids, now: st.append(t, s, fresh(batch), key, now),
        "history": lambda st, ids, now: st.history(t, s, n + 1),
        "range": lambda st, ids, now: st.range(t, range_query),
        "recent": lambda st, ids, now: st.recent_across_sessions(t, recent_query),
        "trim": lambda st, ids, now: st.trim(t, s, n, now),
        "replace": lambda st, ids, now: st.replace_history(t, s, fresh(batch) if flag else [], now),
        "update": lambda st, ids, now: st.update_content(t, s, "hello", "HI", n + 1, now),
        "delete_ts": lambda st, ids, now: st.delete_by_timestamps(t, s, timestamps, now),
        "delete_ids": lambda st, ids, now: st.delete_by_ids(t, s, [ids[x] for x in labels if x in ids] + ["none"], now),
        "clear_session": lambda st, ids, now: st.clear_session(t, s, Clearing(flag, flag2, ["m"]), now),
        "list_sessions": lambda st, ids, now: st.list_sessions(t, after, 2),
        "save_metadata": lambda st, ids, now: st.save_metadata(t, namespace, record, {"v": n, "s": {"a": [1, None]}}, now),
        "get_metadata": lambda st, ids, now: st.get_metadata(t, namespace, record),
        "list_metadata": lambda st, ids, now: st.list_metadata(t, namespace, after, 2),
        "delete_metadata": lambda st, ids, now: st.delete_metadata(t, namespace, record, now),
        "by_seq": lambda st, ids, now: st.messages_by_seq(t, s, lo, hi, n + 1, newest_first=flag),
        "count_by_seq": lambda st, ids, now: st.count_by_seq(t, s, lo, hi),
        "last_seq": lambda st, ids, now: st.last_seq(t, s),
        "guarded": lambda st, ids, now: st.write_metadata_guarded(
            t, writes, guard, [EventDraft(EventType.COMPRESS_REQUESTED, s, {"x": 1})], now
        ),
        "publish": lambda st, ids, now: st.publish(t, EventDraft(EventType.COMPRESS_PROGRESS, s, {"n": n}), now),
        "compact": lambda st, ids, now: st.compact_events(older_than=now - 5 if flag else None, keep_last=30 if flag2 else None),
    }
    if rnd.random() < 0.02:  # rare, or sessions would rarely grow
        return "clear_all", s, lambda st, ids, now: st.clear_all(t, Clearing(flag, flag2, ["m"]), now)
    name = rnd.choice(["append"] * 8 + list(ops))
    return name, s, ops[name]


@pytest.mark.parametrize("seed", range(3))
async def test_random_operations_match_the_sqlite_reference(mongo_uri, tmp_path, seed):
    reference = SqliteStore(tmp_path / "reference.db")
    await reference.open()
    mongo = MongoStore(mongo_uri, f"memoryd_congruence_{uuid.uuid4().hex[:8]}")
    await mongo.open()
    stores = [reference, mongo]
    ids: list[dict[str, str]] = [{}, {}]  # per store: id -> label
    rnd = random.Random(seed)
    try:
        for step in range(150):
            name, session, call = _random_step(rnd)
            now = 1000 + step
            results = []
            for st, known in zip(stores, ids):
                result = await call(st, {label: i for i, label in known.items()}, now)
                stored = result.messages if name == "append" else result[0] if name == "replace" else []
                for m in stored:
                    known.setdefault(m.id, f"{session}:{m.seq}")
                labelled = _label(result, known)
                if name in ("delete_ts", "delete_ids"):
                    labelled = sorted(labelled, key=lambda d: d["seq"])
                results.append(labelled)
            assert results[0] == results[1], (step, name)
            logs = [_label(await st.read_events("T", 0, 10**6), known) for st, known in zip(stores, ids)]
            assert logs[0] == logs[1], (step, name)
            assert await reference.event_bounds("T") == await mongo.event_bounds("T")
    finally:
        await reference.close()
        await mongo.close()
