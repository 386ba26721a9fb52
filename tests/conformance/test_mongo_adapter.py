"""What only the MongoDB adapter has to prove, beyond the shared conformance cases:
replica-set detection, unavailability and recovery, transaction conflicts between
concurrent writers, index use, chunked IN lists and field names MongoDB treats specially.
(Random programs compared with the SQLite adapter: test_congruence.py.)

Runs against the session's SecantusDB and, when MEMORYD_TEST_MONGODB_URI is set, that server.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from memoryd.domain.errors import FailedPrecondition, StorageUnavailable
from memoryd.domain.models import EventType, Message, RangeQuery, RecentQuery
from memoryd.domain.sessions import SessionAttributes, SessionFilter, SessionUpdate
from memoryd.domain.store import MetadataGuard, MetadataWrite
from memoryd.storage.mongo.store import (
    IN_CHUNK,
    NEWEST_FIRST,
    OLDEST_FIRST,
    RECENT_NEWEST_FIRST,
    MongoStore,
    history_filter,
    idle_sessions_filter,
    metadata_prefix_filter,
    range_filter,
    recent_filter,
    retention_labelled_filter,
    sessions_filter,
    sessions_index,
)
from tests.conftest import free_port, mongo_targets, mongo_uri_for

pytestmark = pytest.mark.mongo


@pytest.fixture(scope="module", params=mongo_targets())
def target(request) -> tuple[str, str]:
    """(uri, database) of this module's store; open more stores on it to act as more replicas."""
    return mongo_uri_for(request.param, request), f"memoryd_smoke_{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
async def store(target):
    store = MongoStore(*target)
    await store.open()
    yield store
    await store.close()


def msg(content: str, ts: int, role: str = "user", **kw) -> Message:
    return Message(role=role, content=content, timestamp=ts, **kw)


async def all_events(store: MongoStore, tenant: str):
    return await store.read_events(tenant, 0, 100_000)


# -- deployment shape -----------------------------------------------------------
async def test_standalone_server_is_refused_with_a_clear_error(secantus):
    server = secantus(standalone=True)
    store = MongoStore(server.uri)
    with pytest.raises(FailedPrecondition, match="replica set"):
        await store.open()


async def test_unreachable_server_is_storage_unavailable():
    store = MongoStore(f"mongodb://127.0.0.1:{free_port()}/?directConnection=true", timeout_ms=300)
    with pytest.raises(StorageUnavailable):
        await store.open()


async def test_open_is_idempotent_for_a_second_replica(store, target, tenant):
    # A second server replica opens the same database: collections and indexes already exist.
    other = MongoStore(*target)
    await other.open()
    try:
        await store.append(tenant, "s", [msg("a", 1)], None, 1)
        assert [m.content for m in await other.history(tenant, "s", 10)] == ["a"]
    finally:
        await other.close()


async def test_server_restart_unavailable_then_recovers_with_data_intact(secantus, tenant):
    server = secantus()
    store = MongoStore(server.uri, timeout_ms=1000)
    await store.open()
    try:
        await store.append(tenant, "s", [msg("before", 1)], None, 1)
        server.stop()
        with pytest.raises(StorageUnavailable):
            await store.append(tenant, "s", [msg("lost", 2)], None, 2)
        with pytest.raises(StorageUnavailable):
            await store.ping()
        server.start()
        # The driver rediscovers the server by itself; the store object is never reopened.
        for _ in range(50):
            try:
                await store.ping()
                break
            except StorageUnavailable:
                await asyncio.sleep(0.2)
        stored = await store.append(tenant, "s", [msg("after", 3)], None, 3)
        assert stored.messages[0].seq == 2  # the failed append consumed no seq
        assert [m.content for m in await store.history(tenant, "s", 10)] == ["before", "after"]
        assert [e.seq for e in await all_events(store, tenant)] == [1, 2]
    finally:
        await store.close()


# -- concurrency: transaction conflicts are retried, never surfaced -----------------
async def test_concurrent_appends_get_contiguous_seqs_and_events_commit_in_seq_order(store, target, tenant):
    # Two store objects on one database act as two server replicas: their writers meet as
    # transaction conflicts (within one replica, writers of a tenant take turns).
    replica = MongoStore(*target)
    await replica.open()
    writers = 16
    sessions = ["s" if i % 3 else "other" for i in range(writers)]
    try:
        results = await asyncio.gather(
            *(
                (store if i % 2 else replica).append(tenant, session, [msg(f"m{i}", 100 + i)], None, 1)
                for i, session in enumerate(sessions)
            )
        )
    finally:
        await replica.close()
    for session in ("s", "other"):
        seqs = sorted(r.messages[0].seq for r, owner in zip(results, sessions) if owner == session)
        assert seqs == list(range(1, sessions.count(session) + 1))
    events = await all_events(store, tenant)
    assert [e.seq for e in events] == list(range(1, writers + 1))
    # Within a session, the event order is the seq order (the counter serializes commits).
    refs = [e.payload["messages"][0]["seq"] for e in events if e.session_id == "s"]
    assert refs == sorted(refs)


async def test_concurrent_retries_of_one_idempotency_key_store_once(store, tenant):
    results = await asyncio.gather(*(store.append(tenant, "s", [msg("once", 5)], "key-1", 1) for _ in range(6)))
    assert sum(not r.deduplicated for r in results) == 1
    assert len({r.messages[0].id for r in results}) == 1
    assert [m.content for m in await store.history(tenant, "s", 10)] == ["once"]
    assert len(await all_events(store, tenant)) == 1


async def test_concurrent_first_saves_of_one_metadata_key(store, tenant):
    await asyncio.gather(*(store.save_metadata(tenant, "ns", "k", {"n": i}, i) for i in range(5)))
    entries = await store.list_metadata(tenant, "ns", None, 10)
    assert len(entries) == 1
    assert len(await all_events(store, tenant)) == 5


async def test_concurrent_guarded_writes_with_one_guard_value_commit_once(store, tenant):
    await store.save_metadata(tenant, "cursor", "s", {"seq": 0}, 1)
    guard = MetadataGuard("cursor", "s", "seq", 0)
    outcomes = await asyncio.gather(
        *(store.write_metadata_guarded(tenant, [MetadataWrite("cursor", "s", {"seq": i})], guard, [], 2) for i in range(1, 6))
    )
    assert sorted(outcomes) == [False] * 4 + [True]
    winner = outcomes.index(True) + 1
    assert (await store.get_metadata(tenant, "cursor", "s")).data == {"seq": winner}
    # First creation: the guard "absent" holds for one writer only.
    absent = MetadataGuard("cursor", "new", "seq", None)
    outcomes = await asyncio.gather(
        *(store.write_metadata_guarded(tenant, [MetadataWrite("cursor", "new", {"seq": i})], absent, [], 3) for i in range(4))
    )
    assert sorted(outcomes) == [False] * 3 + [True]


# -- bounded IN lists -----------------------------------------------------------------
async def test_deletes_larger_than_one_in_chunk(store, tenant):
    count = IN_CHUNK + 30
    await store.append(tenant, "s", [msg(f"m{i}", i) for i in range(count)], None, 1)
    asked = list(range(count + IN_CHUNK))  # more timestamps than exist, over several chunks
    removed = await store.delete_by_timestamps(tenant, "s", asked, 2)
    assert len(removed) == count
    assert await store.history(tenant, "s", 10) == []
    assert await store.list_sessions(tenant, None, 10) == []  # a session without messages is not listed
    deleted = [e for e in await all_events(store, tenant) if e.type == EventType.MESSAGES_DELETED]
    assert sum(len(e.payload["ids"]) for e in deleted) == count


# -- field names MongoDB treats specially ------------------------------------------------
async def test_dollar_and_dotted_field_names_round_trip(store, tenant):
    odd = {"$set": 1, "a.b": {"$in": [1, 2]}, "platform": "qq", "nested": {"x.y": None}}
    await store.append(tenant, "s", [msg("odd", 1, metadata=odd, segments=[{"$type": "text"}])], None, 1)
    [got] = await store.history(tenant, "s", 1)
    assert got.metadata == odd and got.segments == [{"$type": "text"}]
    await store.save_metadata(tenant, "ns", "k", odd, 1)
    assert (await store.get_metadata(tenant, "ns", "k")).data == odd


async def test_non_string_platform_is_not_filterable(store, tenant):
    # Only a string metadata.platform filters (as in SQLite); an array never matches by element.
    both = [msg("arr", 1, metadata={"platform": ["qq"]}), msg("str", 2, metadata={"platform": "qq"})]
    await store.append(tenant, "s", both, None, 1)
    got = await store.recent_across_sessions(tenant, RecentQuery(limit=10, platform="qq"))
    assert [m.message.content for m in got] == ["str"]


# -- index use ------------------------------------------------------------------------
def _stages(plan: dict) -> list[dict]:
    found = [plan]
    for key in ("inputStage", "queryPlan"):
        if isinstance(plan.get(key), dict):
            found += _stages(plan[key])
    for child in plan.get("inputStages", []):
        found += _stages(child)
    return found


async def _explain(store: MongoStore, where: dict, order: list) -> tuple[list[dict], bool]:
    explained = await store.db["messages"].find(where).sort(order).limit(50).explain()
    build = await store.db.client.admin.command("buildInfo")
    return _stages(explained["queryPlanner"]["winningPlan"]), "secantusVersion" in build


# SecantusDB 0.7.0b3 plans an index only for equalities plus one range on the next index
# field, and sorts in memory whenever the query has a filter; mongod serves all of these
# from the index in sort order (no blocking SORT stage).
@pytest.mark.parametrize(
    ("where", "order", "index", "indexed_on_secantus"),
    [
        (history_filter("t", "s"), NEWEST_FIRST, "messages_history", True),
        (range_filter("t", RangeQuery("s", 50, from_ts=1, to_ts=100)), OLDEST_FIRST, "messages_range", True),
        (
            range_filter("t", RangeQuery("s", 50, from_ts=1, roles=("user",), exclude_kinds=("control",))),
            OLDEST_FIRST,
            "messages_range",
            False,
        ),
        (recent_filter("t", RecentQuery(limit=50)), RECENT_NEWEST_FIRST, "messages_recent", False),
        (
            recent_filter("t", RecentQuery(limit=50, platform="qq", roles=())),
            RECENT_NEWEST_FIRST,
            "messages_recent_platform",
            True,
        ),
    ],
    ids=["history", "range", "range-filtered", "recent", "recent-platform"],
)
async def test_queries_are_served_by_their_index(store, where, order, index, indexed_on_secantus):
    await store.append("t", "s", [msg("x", 1, metadata={"platform": "qq"})], None, 1)
    stages, secantus = await _explain(store, where, order)
    if secantus and not indexed_on_secantus:
        pytest.skip("SecantusDB scans the collection for this filter shape")
    assert [s.get("indexName") for s in stages if s.get("stage") == "IXSCAN"] == [index], stages
    if not secantus:
        assert "SORT" not in {s.get("stage") for s in stages}, stages


@pytest.mark.parametrize(
    ("where", "index"),
    [
        (SessionFilter(), "sessions_id"),
        (SessionFilter(user_id="u"), "sessions_user"),
        (SessionFilter(agent_id="a"), "sessions_agent"),
        (SessionFilter(user_id="u", agent_id="a"), "sessions_agent_user"),
        (SessionFilter(labels={"k": "v", "z": "y"}), "sessions_labels"),
    ],
    ids=["all", "user", "agent", "agent-user", "labels"],
)
async def test_list_sessions_walks_its_index_in_session_order(store, where, index):
    await store.update_session("t", "s", SessionUpdate(SessionAttributes("u", "a", {"k": "v", "z": "y"})), 1)
    explained = await (
        store.db["sessions"].find(sessions_filter("t", "r", where)).sort("session_id", 1).hint(sessions_index(where))
        .limit(50).explain()
    )  # fmt: skip
    stages = _stages(explained["queryPlanner"]["winningPlan"])
    assert [s.get("indexName") for s in stages if s.get("stage") == "IXSCAN"] == [index], stages
    build = await store.db.client.admin.command("buildInfo")
    if "secantusVersion" not in build:  # SecantusDB sorts in memory whenever the query has a filter
        assert "SORT" not in {s.get("stage") for s in stages}, stages


async def test_a_prefix_listing_is_a_range_of_the_metadata_index(store):
    await store.save_metadata("t", "ns/1", "k", {}, 1)
    explained = await (
        store.db["metadata"].find(metadata_prefix_filter("t", "ns/", ("ns/1", "k")))
        .sort([("namespace", 1), ("key", 1)]).hint("metadata_id").limit(50).explain()
    )  # fmt: skip
    stages = _stages(explained["queryPlanner"]["winningPlan"])
    assert [s.get("indexName") for s in stages if s.get("stage") == "IXSCAN"] == ["metadata_id"], stages
    bounds = next(s for s in stages if s.get("stage") == "IXSCAN").get("indexBounds")
    if bounds is not None:  # mongod: the namespace range is an index bound, not a filter
        assert bounds["namespace"] == ['["ns/1", "ns0")'], bounds


@pytest.mark.parametrize(
    ("where", "order", "index"),
    [
        (idle_sessions_filter("t", 10, (5, "r"), unarchived=True), [("last_activity", 1), ("session_id", 1)],
         "sessions_activity"),
        (retention_labelled_filter("t", ("30", "r")), [("retention_label", 1), ("session_id", 1)], "sessions_retention"),
    ],
    ids=["idle", "labelled"],
)
async def test_the_retention_walks_are_ranges_of_their_index(store, where, order, index):
    await store.update_session("t", "s", SessionUpdate(SessionAttributes("u", "a", {"memoryd.retention-days": "30"})), 1)
    explained = await store.db["sessions"].find(where).sort(order).hint(index).limit(50).explain()
    stages = _stages(explained["queryPlanner"]["winningPlan"])
    assert [s.get("indexName") for s in stages if s.get("stage") == "IXSCAN"] == [index], stages
    build = await store.db.client.admin.command("buildInfo")
    if "secantusVersion" not in build:  # SecantusDB sorts in memory whenever the query has a filter
        assert "SORT" not in {s.get("stage") for s in stages}, stages
