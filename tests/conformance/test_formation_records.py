"""Formation's records (formation/records.py) on every adapter: facts with their sources index
written together, the extraction progress as a compare-and-set, paging newest first, and the
profile's guarded write. The rules are written once over the Store's guarded metadata write;
this checks that every adapter keeps them."""

from __future__ import annotations

from memoryd.domain.models import EventType
from memoryd.formation.records import (
    Change,
    CustomRecord,
    CustomRecords,
    Fact,
    FactRecords,
    Profile,
    Source,
    canonical_json,
    memory_event,
    new_fact_id,
)


def fact(user: str, n: int, *sources: Source, now: int = 1000) -> Fact:
    return Fact(new_fact_id(now + n, "t", n), user, f"fact {n}", "other", 0, ("k",), sources, now + n, now + n)


S1 = Source("s1", "m1", 1)
S2 = Source("s1", "m2", 2)
S3 = Source("s2", "m3", 1)


async def test_facts_and_their_sources_index_are_written_together(store, tenant):
    records = FactRecords(store)
    a, b = fact("ann", 1, S1, S2), fact("ann", 2, S2, S3)
    change = Change()
    change.put(None, a)
    change.put(None, b)
    change.events.append(memory_event(EventType.MEMORY_FORMED, "fact", a.id, "ann"))
    assert await records.commit_progress(tenant, "s1", None, 2, 0, change, 5000)
    assert sorted(await records.by_message(tenant, "s1", "m2")) == sorted([("ann", a.id), ("ann", b.id)])
    assert await records.by_message(tenant, "s1", "m1") == [("ann", a.id)]
    assert await records.by_message(tenant, "s1", "m") == []  # a prefix of an id is not the id
    assert await records.by_message(tenant, "s2", "m3") == [("ann", b.id)]
    assert sorted(await records.indexed_sessions(tenant)) == ["s1", "s2"]
    events = await store.read_events(tenant, 0, 100, types=[EventType.MEMORY_FORMED], through_seq=2**62)
    assert [(e.payload["kind"], e.payload["id"], e.payload["user_id"]) for e in events] == [("fact", a.id, "ann")]

    # One source leaves a: its index entry goes with it; b is deleted with all of its entries.
    trimmed = a.changed(6000, sources=(S1,))
    assert await records.commit_fact(tenant, a, trimmed, [], 6000)
    assert await records.commit_fact(tenant, b, None, [], 6000)
    assert await records.by_message(tenant, "s1", "m2") == []
    assert await records.by_message(tenant, "s2", "m3") == []
    assert await records.indexed_sessions(tenant) == ["s1"]
    got = await records.get(tenant, "ann", a.id)
    assert got == trimmed and got.version == 2
    # A stale version is refused: nothing written.
    assert not await records.commit_fact(tenant, a, None, [], 7000)
    assert await records.get(tenant, "ann", a.id) == trimmed


async def test_the_progress_is_a_compare_and_set(store, tenant):
    records = FactRecords(store)
    first = fact("ann", 1, S1)
    change = Change()
    change.put(None, first)
    assert await records.commit_progress(tenant, "s1", None, 1, 0, change, 1000)
    progress = await records.progress(tenant, "s1")
    assert progress == {"seq": 1, "event": 0, "version": 1}
    # A second writer that read no progress (or an old one) writes nothing, its facts neither.
    late = Change()
    late.put(None, fact("ann", 2, S2))
    assert not await records.commit_progress(tenant, "s1", None, 2, 0, late, 2000)
    assert [f.id for f in await records.facts(tenant, "ann")] == [first.id]
    assert await records.commit_progress(tenant, "s1", progress, 2, 9, late, 2000)
    assert (await records.progress(tenant, "s1"))["version"] == 2


async def test_facts_page_newest_first_with_filters(store, tenant):
    records = FactRecords(store)
    change = Change()
    made = [fact("ann", n, S1 if n % 2 else S3) for n in range(1, 8)]
    for f in made:
        change.put(None, f)
    old = fact("ann", 8, S1)
    superseded = old.changed(9000, valid_to=9000, superseded_by=made[0].id)
    change.put(None, superseded)
    change.put(None, fact("bob", 9, S1))
    await records.commit(tenant, change, 9000)
    newest_first = [f.id for f in sorted(made, key=lambda f: -f.create_time)]
    seen, after = [], None
    while True:
        page, after = await records.page(tenant, "ann", after, 3, include_superseded=False)
        seen += [f.id for f in page]
        if after is None:
            break
    assert seen == newest_first
    everything, _ = await records.page(tenant, "ann", None, 100, include_superseded=True)
    assert [f.id for f in everything] == [superseded.id, *newest_first]
    in_s2, _ = await records.page(tenant, "ann", None, 100, session_id="s2", include_superseded=True)
    assert {f.id for f in in_s2} == {f.id for f in made if f.sources == (S3,)}
    assert [f.user_id for f in await records.facts(tenant, "bob")] == ["bob"]


async def test_a_profile_is_written_guarded_on_its_version(store, tenant):
    records = FactRecords(store)
    first = Profile("ann", "likes tea", ("f1",), 1000, "fp1")
    assert await records.save_profile(tenant, None, first, [], 1000)
    stored = await records.profile(tenant, "ann")
    assert stored.text == "likes tea" and stored.version == 1
    assert not await records.save_profile(tenant, None, first, [], 1000)  # it exists now
    second = Profile("ann", "likes coffee", ("f2",), 2000, "fp2")
    assert await records.save_profile(tenant, stored, second, [], 2000)
    assert not await records.save_profile(tenant, stored, None, [], 3000)  # stale
    assert await records.save_profile(tenant, await records.profile(tenant, "ann"), None, [], 3000)
    assert await records.profile(tenant, "ann") is None


async def test_custom_records_share_the_rule_and_keep_any_json_value(store, tenant):
    """Custom strategies' records (records.CustomRecords) use the same storage rule: the record
    and its sources index together, a progress per strategy, pages filtered by strategy and
    session. The value is kept as JSON text, so keys no adapter takes as a field name ("a.b",
    "$x") and numbers past 2^53 read back exactly."""
    records = CustomRecords(store)
    value = {"a.b": {"$x": 1}, "big": 2**60 + 1, "text": "ünïcode"}
    likes = CustomRecord(new_fact_id(2000, "t", 1), "ann", "likes", canonical_json(value), (S1, S2), 2000, 2000)
    other = CustomRecord(new_fact_id(1000, "t", 2), "ann", "dislikes", canonical_json({"x": 1}), (S3,), 1000, 1000)
    change = Change()
    change.put(None, likes)
    change.put(None, other)
    assert await records.commit_progress(tenant, "s1", None, 2, 0, change, 2000, "likes")
    assert await records.progress(tenant, "s1", "likes") == {"seq": 2, "event": 0, "version": 1}
    assert await records.progress(tenant, "s1", "dislikes") is None
    assert (await records.get(tenant, "ann", likes.id)).value == value
    assert await records.by_message(tenant, "s1", "m2") == [("ann", likes.id)]
    assert await FactRecords(store).by_message(tenant, "s1", "m2") == []  # an index of its own
    assert [r.id for r in await records.of_strategy(tenant, "ann", "likes")] == [likes.id]
    listed, after = await records.listed(tenant, "ann", None, 10, session_id="s2")
    assert [r.id for r in listed] == [other.id] and after is None
    assert [r.id for r in (await records.listed(tenant, "ann", None, 10))[0]] == [likes.id, other.id]
    assert await records.commit_one(tenant, likes, None, [], 3000)
    assert await records.by_message(tenant, "s1", "m1") == []
    assert sorted(await records.indexed_sessions(tenant)) == ["s2"]
