"""Long-term memory entries (docs/CONTEXT.md), on every adapter."""

from __future__ import annotations

import asyncio
import unicodedata

import pytest

from memoryd.domain.entries import Entries, Entry, normalize, rank
from memoryd.domain.errors import FailedPrecondition, StorageUnavailable
from memoryd.domain.models import EventType
from tests.summaries.conftest import LIMITS


def test_normalization_folds_whitespace():
    assert normalize("  likes\t\tcoffee \n\u3000 black ") == "likes coffee black"


async def test_keywords_are_words_in_english_and_in_chinese(entries, tenant):
    photo = await entries.save(tenant, "zh", "我喜欢摄影和旅行", [])
    await entries.save(tenant, "zh", "他喜欢读书", [])
    tea = await entries.save(tenant, "zh", "Drinks TEA every morning", ["drinks"])
    # Chinese is segmented into words (no spaces between them): one word finds its sentence.
    assert [h.entry.id for h in (await entries.search(tenant, "zh", "摄影", 10))[0]] == [photo.entry.id]
    # Case and inflection do not matter ("drinking" and "drinks" share a stem).
    assert [h.entry.id for h in (await entries.search(tenant, "zh", "tea drinking", 10))[0]] == [tea.entry.id]


async def test_japanese_keywords_find_their_entry(entries, tenant):
    """Kana and mixed kana/kanji are split into searchable units; NFD kana match NFC."""
    adk = await entries.save(tenant, "ja", "私はPythonでADKを使っています", [])
    db = await entries.save(tenant, "ja", unicodedata.normalize("NFD", "来週からデータベースの設計を始めます"), [])
    await entries.save(tenant, "ja", "我喜欢摄影和旅行", [])
    for query, saved in (("使って", adk), ("データベース", db), ("設計", db), ("ﾃﾞｰﾀﾍﾞｰｽ", db)):
        assert [h.entry.id for h in (await entries.search(tenant, "ja", query, 10))[0]] == [saved.entry.id], query


async def test_duplicates_are_not_stored_twice(entries, tenant, store):
    first = await entries.save(tenant, "f:1", "likes   black\ncoffee", ["drink"])
    again = await entries.save(tenant, "f:1", " likes black coffee ", ["other"])
    assert not first.deduplicated and again.deduplicated
    assert again.entry.id == first.entry.id and again.entry.tags == ["drink"] and again.count == 1
    assert first.entry.text == "likes black coffee"
    listed, _ = await entries.list_entries(tenant, "f:1", 0, "")
    assert [e.text for e in listed] == ["likes black coffee"]
    events = [e for e in await store.read_events(tenant, 0, 100) if e.type == EventType.ENTRY_CHANGED]
    assert [e.payload for e in events] == [{"scope": "f:1", "entry_id": first.entry.id, "deleted": False}]


async def test_scopes_isolate(entries, tenant):
    saved = await entries.save(tenant, "g:1", "the group meets on fridays", ["schedule"])
    await entries.save(tenant, "g:2", "the other group meets on mondays", ["schedule"])
    hits, _ = await entries.search(tenant, "g:1", "meets", 10)
    assert [h.entry.id for h in hits] == [saved.entry.id]
    assert await entries.forget(tenant, "g:2", saved.entry.id) is False
    assert [e.scope for e in (await entries.list_entries(tenant, "g:2", 0, ""))[0]] == ["g:2"]
    assert (await entries.list_entries(tenant, "g:3", 0, "")) == ([], "")


async def test_scope_cap_answers_failed_precondition(entries, tenant):
    ids = [(await entries.save(tenant, "s", f"fact {i}", [])).entry.id for i in range(5)]
    with pytest.raises(FailedPrecondition) as full:
        await entries.save(tenant, "s", "one too many", [])
    assert full.value.reason == "ENTRY_SCOPE_FULL"
    assert full.value.metadata == {"scope": "s", "count": "5", "capacity": "5"}
    assert (await entries.save(tenant, "s", "fact  0", [])).deduplicated  # a duplicate still answers
    assert (await entries.save(tenant, "other", "room elsewhere", [])).count == 1
    assert await entries.forget(tenant, "s", ids[0]) is True
    assert await entries.forget(tenant, "s", ids[0]) is False
    assert (await entries.save(tenant, "s", "now it fits", [])).count == 5


async def test_racing_saves_never_exceed_the_cap(entries, tenant):
    results = await asyncio.gather(
        *(entries.save(tenant, "race", f"fact {i}", []) for i in range(8)), return_exceptions=True
    )
    saved = [r for r in results if not isinstance(r, BaseException)]
    rejected = [r for r in results if isinstance(r, BaseException)]
    assert len(saved) == 5 and all(isinstance(r, FailedPrecondition) for r in rejected)
    assert len((await entries.list_entries(tenant, "race", 0, ""))[0]) == 5


async def test_keyword_ranking_puts_tags_above_content(entries, tenant):
    in_content = await entries.save(tenant, "s", "went hiking with a camera", [])
    in_tag = await entries.save(tenant, "s", "bought a new lens", ["photography", "camera"])
    both = await entries.save(tenant, "s", "camera club every sunday", ["camera"])
    await entries.save(tenant, "s", "allergic to peanuts", ["health"])
    hits, semantic = await entries.search(tenant, "s", "Camera", 10)
    assert [h.entry.id for h in hits] == [both.entry.id, in_tag.entry.id, in_content.entry.id]
    scores = [h.keyword_score for h in hits]
    assert scores[0] > scores[1] > scores[2] > 0 and not semantic
    assert [h.score for h in hits][0] == 1.0  # keyword-only: normalized to the best match
    # Zero scores are dropped.
    assert (await entries.search(tenant, "s", "unrelated words", 10)) == ([], False)
    # Without a query: newest first.
    hits, _ = await entries.search(tenant, "s", "", 2)
    assert len(hits) == 2 and hits[0].entry.text == "allergic to peanuts"


async def test_semantic_score_is_blended_when_vectors_exist(entries, tenant):
    model = "test:3d"
    near = await entries.save(tenant, "s", "enjoys taking pictures", [], [1.0, 0.0, 0.0], model)
    far = await entries.save(tenant, "s", "camera shop downtown", [], [0.0, 1.0, 0.0], model)
    plain = await entries.save(tenant, "s", "camera without a vector", [])
    blended = await entries.save(tenant, "s", "a camera lover", [], [1.0, 0.05, 0.0], model)
    hits, semantic = await entries.search(tenant, "s", "camera", 10, [0.9, 0.1, 0.0], model)
    assert semantic
    by_id = {h.entry.id: h for h in hits}
    assert by_id[near.entry.id].keyword_score == 0 and by_id[near.entry.id].semantic_score > 0.9
    assert by_id[far.entry.id].semantic_score == 0  # cosine 0.11 is below the floor
    assert by_id[plain.entry.id].semantic_score == 0 and by_id[plain.entry.id].keyword_score > 0
    # Fused (min-max per part, equal weights): the best in both parts scores 1 and comes first.
    assert hits[0].entry.id == blended.entry.id and hits[0].score == pytest.approx(1.0)
    assert {h.entry.id for h in hits} == {near.entry.id, far.entry.id, plain.entry.id, blended.entry.id}
    # keyword_weight 0 is semantic-only (cosines), 1 keyword-only (BM25 normalized).
    hits, _ = await entries.search(tenant, "s", "camera", 10, [0.9, 0.1, 0.0], model, keyword_weight=0.0)
    assert [h.entry.id for h in hits] == [blended.entry.id, near.entry.id]
    assert hits[1].score == pytest.approx(hits[1].semantic_score)
    hits, _ = await entries.search(tenant, "s", "camera", 10, [0.9, 0.1, 0.0], model, keyword_weight=1.0)
    assert hits[0].entry.id == blended.entry.id and {h.entry.id for h in hits[1:]} == {plain.entry.id, far.entry.id}
    # A vector of another model, or another dimension, is ignored: keyword-only.
    hits, semantic = await entries.search(tenant, "s", "camera", 10, [0.9, 0.1, 0.0], "other:model")
    assert not semantic and {h.entry.id for h in hits} == {far.entry.id, plain.entry.id, blended.entry.id}
    hits, semantic = await entries.search(tenant, "s", "camera", 10, [1.0, 0.0], model)
    assert not semantic


async def test_list_pages_newest_first(entries, tenant):
    for i in range(5):
        await entries.save(tenant, "s", f"fact {i}", [])
    first, token = await entries.list_entries(tenant, "s", 2, "")
    second, token2 = await entries.list_entries(tenant, "s", 2, token)
    third, end = await entries.list_entries(tenant, "s", 2, token2)
    listed = first + second + third
    assert end == "" and len({e.id for e in listed}) == 5
    assert [e.create_time for e in listed] == sorted((e.create_time for e in listed), reverse=True)


async def test_the_count_is_the_stored_entries(entries, tenant, store):
    """No counter to drift: an entry removed through MetadataService frees its place, and a
    counter record left by an earlier version is ignored."""
    saved = [await entries.save(tenant, "s", f"fact {i}", []) for i in range(3)]
    await store.save_metadata(tenant, "memoryd.entry-scopes", "count/s", {"count": 5}, 0)
    assert (await entries.save(tenant, "s", "fact 3", [])).count == 4
    await store.delete_metadata(tenant, "memoryd.entries/s", saved[0].entry.id, 0)
    assert (await entries.save(tenant, "s", "fact 4", [])).count == 4


async def test_a_key_is_one_entry_its_last_save(entries, tenant, store):
    first = await entries.save(tenant, "k", "likes green tea", ["drink"], key="food")
    again = await entries.save(tenant, "k", "likes black coffee", [], key="food")
    assert not first.replaced and again.replaced and not again.deduplicated
    assert again.entry.id == first.entry.id and again.entry.key == "food" and again.count == 1
    # Keyed entries are not deduplicated by text: another key with the same text is its own entry.
    other = await entries.save(tenant, "k", "likes black coffee", [], key="drink")
    plain = await entries.save(tenant, "k", "likes black coffee", [])
    assert len({again.entry.id, other.entry.id, plain.entry.id}) == 3 and plain.count == 3
    assert [h.entry.key for h in (await entries.search(tenant, "k", "tea", 10))[0]] == []
    assert {h.entry.key for h in (await entries.search(tenant, "k", "coffee", 10))[0]} == {"food", "drink", ""}
    # A replacement fits a full scope (it adds nothing); forget by key.
    full = Entries(store, LIMITS, capacity=3)
    assert (await full.save(tenant, "k", "likes oolong", [], key="food")).replaced
    with pytest.raises(FailedPrecondition):
        await full.save(tenant, "k", "a fourth", [], key="new")
    assert await entries.forget(tenant, "k", key="food") is True
    assert await entries.forget(tenant, "k", key="food") is False
    assert {e.key for e in (await entries.list_entries(tenant, "k", 0, ""))[0]} == {"drink", ""}


async def patient(call):
    """A call retried while the store answers StorageUnavailable (UNAVAILABLE, which clients
    retry): with 200 writers at once, SecantusDB on a busy machine can queue a tenant's
    writes past the store's timeout. Nothing else is retried: no conflict ever surfaces."""
    for attempt in range(30):
        try:
            return await call()
        except StorageUnavailable:
            await asyncio.sleep(0.05 * (attempt + 1))
    return await call()


# 200 transactions into one tenant: about a minute on SecantusDB alone, more on a busy machine.
@pytest.mark.timeout(600)
async def test_200_concurrent_writers_end_with_the_final_state(store, tenant):
    """Distinct texts, equal keys, forgets and saves into one scope at once: nothing fails for
    another's sake, and the scope holds exactly what the writes imply."""
    entries = Entries(store, LIMITS, capacity=200)
    kept = [await entries.save(tenant, "busy", f"old fact {i}", []) for i in range(20)]
    distinct = [
        patient(lambda i=i: entries.save(tenant, "busy", f"new fact number {i}", [f"t{i % 3}"])) for i in range(100)
    ]
    keyed = [
        patient(lambda k=k, v=v: entries.save(tenant, "busy", f"item {k} version {v}", [], key=f"item-{k}"))
        for k in range(8)
        for v in range(10)
    ]
    forgets = [patient(lambda r=r: entries.forget(tenant, "busy", r.entry.id)) for r in kept[:10]]
    await asyncio.gather(*distinct, *keyed, *forgets)
    listed, _ = await entries.list_entries(tenant, "busy", 1000, "")
    assert len(listed) == 10 + 100 + 8
    by_key = {e.key: e for e in listed if e.key}
    assert sorted(by_key) == [f"item-{k}" for k in range(8)]
    for k in range(8):
        # The entry is the text of one of its key's saves, and the other nine are gone from search.
        text = by_key[f"item-{k}"].text
        assert text.startswith(f"item {k} version ")
        hits, _ = await entries.search(tenant, "busy", f"item {k} version", 1000)
        assert [h.entry.text for h in hits if h.entry.key == f"item-{k}"] == [text]
    assert {e.text for e in listed if not e.key} == {f"old fact {i}" for i in range(10, 20)} | {
        f"new fact number {i}" for i in range(100)
    }


# 200 transactions into one tenant: about a minute on SecantusDB alone, more on a busy machine.
@pytest.mark.timeout(600)
async def test_concurrent_saves_fill_a_scope_exactly(store, tenant):
    entries = Entries(store, LIMITS, capacity=30)
    results = await asyncio.gather(
        *(patient(lambda i=i: entries.save(tenant, "cap", f"fact {i}", [])) for i in range(200)), return_exceptions=True
    )
    saved = [r for r in results if not isinstance(r, BaseException)]
    rejected = [r for r in results if isinstance(r, BaseException)]
    assert len(saved) == 30 and len(rejected) == 170
    assert all(isinstance(r, FailedPrecondition) and r.reason == "ENTRY_SCOPE_FULL" for r in rejected)
    assert len({r.entry.id for r in saved}) == 30
    assert len((await entries.list_entries(tenant, "cap", 1000, ""))[0]) == 30


def test_rank_ties_keep_newest_first():
    older = Entry("a", "s", "tea", [], 1)
    newer = Entry("b", "s", "tea", [], 2)
    hits, _ = rank([older, newer], "tea", 10)
    assert [h.entry.id for h in hits] == ["b", "a"]


async def test_capacity_is_configurable(store, tenant):
    small = Entries(store, LIMITS, capacity=1)
    await small.save(tenant, "s", "only one", [])
    with pytest.raises(FailedPrecondition):
        await small.save(tenant, "s", "second", [])
