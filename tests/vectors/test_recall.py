"""SearchMemory semantics against a real Qdrant and a real message store (docs/VECTORS.md, "SearchMemory")."""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest

from memoryd.domain import recall, windows
from memoryd.domain.models import ClearOutcome, ClearTarget, now_ms
from memoryd.domain.recall import RecallQuery, RecallScope
from memoryd.domain.vectors import LEGACY_KEY, LEGACY_NAMESPACE, VectorPoint, VectorRecord, VectorSelector
from memoryd.domain.windows import WindowRequest
from tests.vectors.conftest import msg, sim, unit

DAY = 86_400_000
M1 = "test:model-one"
M2 = "test:model-two"


def point(tenant, angle, *, model=M1, session="s1", ts=None, role="user", message_id=None, dims=4, **fields):
    """A point at `angle` degrees from the query; a fresh message id unless one is given ("" for none)."""
    record = VectorRecord(
        session_id=session,
        timestamp=ts or now_ms(),
        model_id=model,
        message_id=uuid.uuid4().hex if message_id is None else message_id,
        role=role,
        text=fields.pop("text", f"text {angle}"),
        **fields,
    )
    return VectorPoint(tenant, unit(angle, dims), record)


def query(**overrides) -> RecallQuery:
    fields = dict(vector=unit(0), model_id=M1, time_weight=0.0, context_window=0)
    fields.update(overrides)
    return RecallQuery(**fields)


async def test_point_ids_are_deterministic_and_replace(vectors, tenant):
    p = point(tenant, 10, message_id="m-1", ts=1000)
    [first] = await vectors.upsert(tenant, [p])
    [again] = await vectors.upsert(tenant, [point(tenant, 20, message_id="m-1", ts=1000)])
    assert first == again
    other_model = point(tenant, 10, message_id="m-1", ts=1000, model=M2)
    assert other_model.id != first
    stats = await vectors.stats(tenant)
    assert [(m.model_id, m.count) for m in stats.models] == [(M1, 1)]


async def test_two_models_of_one_dimension_never_mix(vectors, tenant, caplog):
    await vectors.upsert(tenant, [point(tenant, a, model=M2, text=f"m2-{a}") for a in (1, 2, 3)])
    await vectors.upsert(tenant, [point(tenant, a, model=M1, text=f"m1-{a}") for a in (30, 40)])
    with caplog.at_level(logging.WARNING, logger="memoryd.vectors.recall"):
        result = await vectors.search(tenant, query(top_k=5))
        again = await vectors.search(tenant, query(top_k=5))
    assert [h.text for h in result.hits] == ["m1-30", "m1-40"]
    assert result.excluded_other_models == 3
    assert [h.text for h in again.hits] == ["m1-30", "m1-40"]
    warnings = [r for r in caplog.records if "other models excluded" in r.getMessage()]
    assert len(warnings) == 1 and M2 in warnings[0].getMessage()  # once per model per process
    m2 = await vectors.search(tenant, query(model_id=M2, top_k=5))
    assert [h.text for h in m2.hits] == ["m2-1", "m2-2", "m2-3"]


async def test_legacy_vectors_adopt_the_recorded_model_and_the_marker_lifecycle(vectors, store, memory, tenant):
    legacy = [point(tenant, a, model=None, text=f"legacy-{a}") for a in (5, 6)]
    await vectors.upsert(tenant, legacy)
    assert await store.get_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY) is None

    first = await vectors.search(tenant, query(top_k=5))  # records M1 as the legacy model
    assert [h.text for h in first.hits] == ["legacy-5", "legacy-6"]
    marker = await store.get_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY)
    assert marker.data["model_id"] == M1

    # Kept: another model's search does not re-record it, and sees no legacy vectors.
    other = await vectors.search(tenant, query(model_id=M2, top_k=5))
    assert other.hits == [] and other.excluded_other_models == 2
    assert (await store.get_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY)).data["model_id"] == M1
    # Clearing only messages keeps it.
    await memory.clear(tenant, None, [ClearTarget.MESSAGES])
    assert (await store.get_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY)).data["model_id"] == M1
    assert (await vectors.stats(tenant)).legacy_model == M1

    # Clearing all vectors deletes it; the next search records its own model.
    [result] = await memory.clear(tenant, None, [ClearTarget.VECTORS])
    assert result.outcome is ClearOutcome.CLEARED and result.removed_count == 2
    assert await store.get_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY) is None
    await vectors.upsert(tenant, [point(tenant, 5, model=None, text="legacy-again")])
    assert [h.text for h in (await vectors.search(tenant, query(model_id=M2))).hits] == ["legacy-again"]
    assert (await store.get_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY)).data["model_id"] == M2

    # DeleteVectors(all) deletes it too.
    await vectors.delete(VectorSelector(tenant), clear_marker=True)
    assert await store.get_metadata(tenant, LEGACY_NAMESPACE, LEGACY_KEY) is None


async def test_others_only_overscans_so_top_k_fills(vectors, tenant):
    # 20 assistant replies closer to the query than the 3 user messages: a 4x pool
    # (12 candidates) holds no user message at all, the 8x pool (24) holds all three.
    assistants = [point(tenant, 1 + i * 0.1, role="assistant", text=f"a{i}") for i in range(20)]
    users = [point(tenant, 10 + i, role="user", text=f"u{i}") for i in range(3)]
    legacy_roleless = [point(tenant, 60, role="", text="roleless")]
    await vectors.upsert(tenant, assistants + users + legacy_roleless)

    others = await vectors.search(tenant, query(top_k=3, others_only=True))
    assert [h.text for h in others.hits] == ["u0", "u1", "u2"]
    everyone = await vectors.search(tenant, query(top_k=3))
    assert [h.record.role for h in everyone.hits] == ["assistant"] * 3
    assert query(top_k=3).candidate_limit == 12 and query(top_k=3, others_only=True).candidate_limit == 24
    # A vector without a role counts as the other party.
    roleless = await vectors.search(tenant, query(top_k=1, others_only=True, vector=unit(60)))
    assert [h.text for h in roleless.hits] == ["roleless"]


async def test_min_score_applies_to_the_semantic_score_before_time_weighting(vectors, tenant):
    now = now_ms()
    await vectors.upsert(
        tenant,
        [
            point(tenant, 53.13, ts=now, text="fresh-but-far"),  # semantic 0.6, recency ~1 -> score ~0.72
            point(tenant, 36.87, ts=now - 365 * DAY, text="old-but-close"),  # semantic 0.8
        ],
    )
    result = await vectors.search(tenant, query(min_score=0.7, time_weight=0.3))
    assert [h.text for h in result.hits] == ["old-but-close"]
    assert result.hits[0].ranked.candidate.semantic == pytest.approx(0.8, abs=1e-3)
    unfiltered = await vectors.search(tenant, query(min_score=0.0, time_weight=0.3))
    assert [h.text for h in unfiltered.hits] == ["fresh-but-far", "old-but-close"]


async def test_time_decay_orders_equal_matches_by_recency_with_the_documented_formula(vectors, tenant):
    now = now_ms()
    ages = {"today": 0, "week": 7, "month": 30}
    await vectors.upsert(
        tenant, [point(tenant, 20, ts=now - days * DAY, text=name, message_id=name) for name, days in ages.items()]
    )
    result = await vectors.search(tenant, query(time_weight=0.5))
    assert [h.text for h in result.hits] == ["today", "week", "month"]
    half_life = query().half_life_ms
    for hit in result.hits:
        age = now - hit.record.timestamp
        expected = 0.5 * sim(20) + 0.5 * 0.5 ** (age / half_life)
        assert hit.ranked.score == pytest.approx(expected, abs=1e-3)
    assert recall.recency(now - half_life, now, half_life) == pytest.approx(0.5)
    # time_weight 0: pure semantic, the closer one wins whatever its age.
    await vectors.upsert(tenant, [point(tenant, 5, ts=now - 900 * DAY, text="ancient-close")])
    assert (await vectors.search(tenant, query(time_weight=0.0))).hits[0].text == "ancient-close"
    assert (await vectors.search(tenant, query(time_weight=1.0))).hits[0].text == "today"


async def test_each_scope_sees_only_its_sessions(vectors, tenant):
    await vectors.upsert(
        tenant,
        [
            point(tenant, 10, session="here", platform="qq", sender_id="alice", text="here-alice"),
            point(tenant, 11, session="there", platform="qq", sender_id="bob", text="there-bob"),
            point(tenant, 12, session="far", platform="discord", sender_id="alice", text="far-alice"),
            point(tenant, 13, session="far", platform="discord", sender_id="carol", mentioned_ids=("alice",),
                  text="far-mentions-alice"),
            point(tenant, 14, session="far", platform="discord", sender_id="carol", text="far-carol"),
        ],
    )

    async def texts(**q):
        return sorted(h.text for h in (await vectors.search(tenant, query(top_k=10, **q))).hits)

    assert await texts(scope=RecallScope.SESSION, session_id="here") == ["here-alice"]
    assert await texts(scope=RecallScope.PLATFORM, platform="qq") == ["here-alice", "there-bob"]
    assert await texts(scope=RecallScope.USER, session_id="there", speaker_ids=("alice",)) == [
        "far-alice", "far-mentions-alice", "here-alice", "there-bob"
    ]
    assert len(await texts(scope=RecallScope.ALL)) == 5
    # Another tenant sees nothing of these.
    assert (await vectors.search("someone-else", query(top_k=10))).hits == []


async def test_user_scope_boosts_hits_by_or_mentioning_a_speaker(vectors, tenant):
    await vectors.upsert(
        tenant,
        [
            point(tenant, 10, session="cur", sender_id="bob", text="closer-from-bob"),
            point(tenant, 40, session="old", sender_id="alice", text="further-from-alice"),
            point(tenant, 45, session="old", sender_id="carol", mentioned_ids=("alice",), text="mentions-alice"),
        ],
    )
    q = query(top_k=3, scope=RecallScope.USER, session_id="cur", speaker_ids=("alice",), user_priority_boost=2.0)
    result = await vectors.search(tenant, q)
    assert [h.text for h in result.hits] == ["further-from-alice", "mentions-alice", "closer-from-bob"]
    assert [h.ranked.boosted for h in result.hits] == [True, True, False]
    assert result.hits[0].ranked.score == pytest.approx(2 * sim(40), abs=1e-3)
    unboosted = await vectors.search(tenant, query(top_k=3, scope=RecallScope.USER, session_id="cur",
                                                    speaker_ids=("alice",), user_priority_boost=1.0))
    assert unboosted.hits[0].text == "closer-from-bob"
    # The boost belongs to user scope only.
    assert (await vectors.search(tenant, query(top_k=1))).hits[0].ranked.boosted is False


async def _conversation(memory, tenant, session="s1", base=1_000_000):
    """u0 a0 [system] [summary] u1 tool notice [system] a1 u2 a2, one second apart."""
    rows = [
        msg("user", "u0", base + 0),
        msg("assistant", "a0", base + 1000),
        msg("system", "delivery report", base + 2000),
        msg("assistant", "compressed", base + 3000, kind="summary"),
        msg("user", "u1 the hit", base + 4000),
        msg("tool", "tool result", base + 5000),
        msg("notice", "a notice", base + 6000),
        msg("system", "stop marker", base + 7000),
        msg("assistant", "a1", base + 8000),
        msg("user", "u2", base + 9000),
        msg("assistant", "a2", base + 10000),
    ]
    saved = (await memory.save_messages(tenant, session, rows)).messages
    return {m.content: m for m in saved}


async def test_context_windows_skip_control_kinds_and_system_without_using_up_n(vectors, memory, tenant):
    by_text = await _conversation(memory, tenant)
    hit = by_text["u1 the hit"]
    await vectors.upsert(tenant, [point(tenant, 5, message_id=hit.id, ts=hit.timestamp, text=hit.content)])
    [result] = (await vectors.search(tenant, query(context_window=2))).hits
    assert [i.message.content for i in result.before] == ["u0", "a0"]
    assert [i.message.content for i in result.after] == ["tool result", "a notice"]
    [wide] = (await vectors.search(tenant, query(context_window=4))).hits
    assert [i.message.content for i in wide.before] == ["u0", "a0"]  # the session's start
    assert [i.message.content for i in wide.after] == ["tool result", "a notice", "a1", "u2"]
    # Callers may name their own control kinds (then "summary" is a normal message).
    [own] = (await vectors.search(tenant, query(context_window=1, control_kinds=("other",)))).hits
    assert [i.message.content for i in own.before] == ["compressed"]
    [none] = (await vectors.search(tenant, query(context_window=0))).hits
    assert none.before == [] and none.after == []


async def test_context_of_a_timestamp_only_point_and_of_old_sparse_history(vectors, memory, tenant):
    base = 10 * DAY
    rows = [msg("user", f"old-{i}", base + i * 3 * DAY) for i in range(3)]  # days apart: several backward windows
    rows.append(msg("user", "target", base + 20 * DAY))
    saved = (await memory.save_messages(tenant, "sparse", rows)).messages
    target = saved[-1]
    await vectors.upsert(tenant, [point(tenant, 5, session="sparse", ts=target.timestamp, message_id="", text="target")])
    [hit] = (await vectors.search(tenant, query(context_window=2))).hits
    assert [i.message.content for i in hit.before] == ["old-1", "old-2"]
    assert hit.after == []


async def test_cross_session_expansion_can_be_turned_off(vectors, memory, tenant):
    other = await _conversation(memory, tenant, session="other")
    hit = other["u1 the hit"]
    await vectors.upsert(tenant, [point(tenant, 5, session="other", message_id=hit.id, ts=hit.timestamp)])
    q = dict(context_window=1, session_id="current")
    [expanded] = (await vectors.search(tenant, query(**q))).hits
    assert [i.message.content for i in expanded.before] == ["a0"]
    [bare] = (await vectors.search(tenant, query(expand_cross_session=False, **q))).hits
    assert bare.before == [] and bare.after == []
    # Hits of the current session are always expanded.
    [own] = (await vectors.search(tenant, query(context_window=1, session_id="other", expand_cross_session=False))).hits
    assert [i.message.content for i in own.after] == ["tool result"]


async def test_hits_and_neighbours_are_deduplicated(vectors, memory, tenant):
    by_text = await _conversation(memory, tenant)
    u1, a1, u2 = by_text["u1 the hit"], by_text["a1"], by_text["u2"]
    tool = by_text["tool result"]
    far = (await memory.save_messages(tenant, "s2", [msg("user", "elsewhere", 5_000_000)])).messages[0]
    await vectors.upsert(
        tenant,
        [
            point(tenant, 1, message_id=u1.id, ts=u1.timestamp, text=u1.content),
            point(tenant, 2, message_id=tool.id, ts=tool.timestamp, text="tool result"),
            point(tenant, 3, message_id=a1.id, ts=a1.timestamp, text=a1.content),
            point(tenant, 4, session="s2", message_id=far.id, ts=far.timestamp, text="elsewhere"),
        ],
    )
    result = await vectors.search(tenant, query(top_k=3, context_window=2))
    # Hits never give way to context: "tool result" is in the best hit's window and keeps
    # its own place, marked; so is a1, in the tool result's window.
    assert [h.text for h in result.hits] == ["u1 the hit", "tool result", "a1"]
    assert [h.in_context_of for h in result.hits] == [None, 0, 1]
    assert [i.message.content for i in result.hits[0].after] == ["tool result", "a notice"]
    # A window leaves out what better hits showed, keeps worse hits (they are marked).
    assert [i.message.content for i in result.hits[1].before] == []
    assert [i.message.content for i in result.hits[1].after] == ["a1"]
    assert [i.message.content for i in result.hits[2].before] == []
    context = [i.message.id for h in result.hits for i in (*h.before, *h.after)]
    assert len(context) == len(set(context))  # no message is context twice
    assert [i.message.content for i in result.hits[2].after] == ["u2", "a2"]
    assert u2.id in context

    wider = await vectors.search(tenant, query(top_k=4, context_window=2))
    assert [h.text for h in wider.hits] == ["u1 the hit", "tool result", "a1", "elsewhere"]

    excluded = await vectors.search(tenant, query(top_k=3, context_window=0, exclude_message_ids=frozenset({u1.id})))
    assert u1.id not in [h.record.message_id for h in excluded.hits]


async def test_repeated_texts_take_no_further_hit_place(vectors, tenant):
    """The same words said in many sessions are one hit that counts the others (docs/VECTORS.md,
    "Selection"), unless the caller keeps repeats; points without text never collapse."""
    copies = [point(tenant, a, session=f"s{a}", text="The train was late again.") for a in (1, 2, 4, 8)]
    others = [point(tenant, 3, text="I row on Sundays."), point(tenant, 5, text="Fencing it is.")]
    untexted = [point(tenant, a, session="bare", text="") for a in (6, 7)]
    await vectors.upsert(tenant, [*copies, *others, *untexted])

    result = await vectors.search(tenant, query(top_k=5))
    assert [h.text for h in result.hits] == ["The train was late again.", "I row on Sundays.", "Fencing it is.", "", ""]
    assert [h.repeats for h in result.hits] == [3, 0, 0, 0, 0]
    assert result.hits[0].record.session_id == "s1"  # the best-ranked copy stands for the others

    kept = await vectors.search(tenant, query(top_k=5, keep_repeated_texts=True))
    train, row, fencing = "The train was late again.", "I row on Sundays.", "Fencing it is."
    assert [h.text for h in kept.hits] == [train, train, row, train, fencing]
    assert [h.repeats for h in kept.hits] == [0] * 5
    # Repeats are counted among the search's candidates (top_k × 4 here: angles 1 to 4).
    few = await vectors.search(tenant, query(top_k=1))
    assert [(h.text, h.repeats) for h in few.hits] == [("The train was late again.", 2)]


async def test_a_candidate_that_turns_out_to_be_a_hit_leaves_its_text_to_later_ones(vectors, memory, tenant):
    """A point without a message id is its message's only once its window is read; when that
    message is already a hit, the point is no hit, and its text does not hold back a later
    message that says the same."""
    [hit] = (await memory.save_messages(tenant, "s1", [msg("user", "u1 the hit", 1_000_000)])).messages
    await vectors.upsert(
        tenant,
        [
            point(tenant, 1, message_id=hit.id, ts=hit.timestamp, text=hit.content),
            point(tenant, 2, message_id="", ts=hit.timestamp, text="an older caption"),  # the same message
            point(tenant, 3, session="s2", text="an older caption"),
        ],
    )
    result = await vectors.search(tenant, query(top_k=2))
    assert [(h.record.session_id, h.text) for h in result.hits] == [("s1", "u1 the hit"), ("s2", "an older caption")]


async def test_truncation_says_how_many_characters_were_cut(vectors, memory, tenant):
    long = "x" * 50
    saved = (await memory.save_messages(tenant, "s1", [msg("user", long, 1000), msg("user", "y" * 30, 2000)])).messages
    await vectors.upsert(tenant, [point(tenant, 1, message_id=saved[0].id, ts=1000, text=long)])
    [hit] = (await vectors.search(tenant, query(context_window=1, per_item_max_chars=10))).hits
    assert hit.text == "x" * 10 + "…[truncated 40 chars]" and hit.truncated_chars == 40
    assert hit.after[0].message.content == "y" * 10 + "…[truncated 20 chars]"
    assert hit.after[0].truncated_chars == 20
    [full] = (await vectors.search(tenant, query(context_window=1))).hits
    assert full.text == long and full.truncated_chars == 0


async def test_a_large_scope_whose_points_rank_low_is_still_found(vectors, tenant):
    # The scope is part of the engine's query: points of the scope that rank below many
    # others are still found.
    close = [point(tenant, 1 + i * 0.1, session="noise", text=f"noise{i}") for i in range(40)]
    far = [point(tenant, 60 + i * 0.1, session="wanted", text=f"wanted{i}") for i in range(60)]
    await vectors.upsert(tenant, close + far)
    result = await vectors.search(tenant, query(top_k=1, scope=RecallScope.SESSION, session_id="wanted"))
    assert [h.text for h in result.hits] == ["wanted0"]
    platform = await vectors.search(tenant, query(top_k=2, scope=RecallScope.PLATFORM, platform="nowhere"))
    assert platform.hits == []


async def test_context_windows_narrow_dense_ranges_and_terminate(store, tenant):
    from memoryd.domain.limits import Limits
    from memoryd.domain.memory import Memory

    memory = Memory(store, Limits())
    rows = [msg("user", f"d{i}", 1000 + i) for i in range(30)]  # one per millisecond
    rows += [msg("user", f"same{i}", 5000) for i in range(8)]  # eight in one millisecond
    saved = (await memory.save_messages(tenant, "dense", rows)).messages

    async def read(q):
        return await store.range(tenant, q)

    hit = saved[29]
    window = await windows.read_window(read, WindowRequest("dense", hit.timestamp, hit.id, "user", 2), page=2, cap=5)
    assert [m.content for m in window.before] == ["d27", "d28"]
    assert [m.content for m in window.after] == ["same0", "same1"]

    crowded = saved[-1]  # more messages in its millisecond than the scan cap
    request = WindowRequest("dense", crowded.timestamp, crowded.id, "user", 2)
    window = await asyncio.wait_for(windows.read_window(read, request, page=2, cap=3), 30)
    assert len(window.before) == 2 and len(window.after) <= 2  # bounded work, an answer


async def test_a_negative_min_score_still_filters_and_zero_keeps_everything(vectors, tenant):
    await vectors.upsert(tenant, [point(tenant, 120, text="opposite-ish"), point(tenant, 170, text="opposite")])
    assert len((await vectors.search(tenant, query(min_score=0.0))).hits) == 2
    assert [h.text for h in (await vectors.search(tenant, query(min_score=-0.9))).hits] == ["opposite-ish"]


# -- hybrid -------------------------------------------------------------------------
async def _hybrid_corpus(vectors, tenant, now):
    """Dense points of M1 (their keyword points come with their text), and one message with
    only a keyword point."""
    await vectors.upsert(
        tenant,
        [
            point(tenant, 5, message_id="near", ts=now, text="weather report"),
            point(tenant, 30, message_id="both", ts=now, text="my camera broke"),
            point(tenant, 60, message_id="far", ts=now, text="a camera and a camera bag"),
        ],
    )
    from memoryd.domain.vectors import KeywordPoint

    record = VectorRecord("s1", now, None, "words", "user", text="camera shop camera lens camera")
    await vectors.index.upsert_keywords([KeywordPoint(tenant, record)], now)


async def test_hybrid_relevance_is_the_documented_fusion(vectors, tenant):
    now = now_ms()
    await _hybrid_corpus(vectors, tenant, now)
    result = await vectors.search(tenant, query(text="camera", top_k=4, keyword_weight=0.4))
    assert result.semantic and result.keyword
    candidates = [h.ranked.candidate for h in result.hits]
    assert {c.record.message_id for c in candidates} == {"near", "both", "far", "words"}
    # Semantic min-max; keyword over [0, best] (4 keyword candidates, fewer than the limit of
    # 16: every other point scores 0); the fusion stated on the span of the cosines.
    cosines = [c.semantic for c in candidates if c.semantic is not None]
    lo, hi = min(cosines), max(cosines)
    best = max(c.keyword for c in candidates if c.keyword is not None)
    for hit in result.hits:
        c = hit.ranked.candidate
        s = 0.0 if c.semantic is None else (c.semantic - lo) / (hi - lo)
        k = 0.0 if c.keyword is None else c.keyword / best
        assert hit.ranked.relevance == pytest.approx(lo + (hi - lo) * (0.6 * s + 0.4 * k))
        assert hit.ranked.score == pytest.approx(hit.ranked.relevance)  # time_weight 0
    by_id = {h.record.message_id: h.ranked.candidate for h in result.hits}
    assert by_id["near"].keyword is None and by_id["words"].semantic is None
    assert by_id["words"].point_id != "" and by_id["both"].semantic == pytest.approx(sim(30), abs=1e-5)

    rrf = await vectors.search(tenant, query(text="camera", top_k=4, fusion=recall.Fusion.RECIPROCAL_RANK))
    for hit in rrf.hits:
        c = hit.ranked.candidate
        ranks = [
            sorted((x for x in (h.ranked.candidate.semantic for h in rrf.hits) if x is not None), reverse=True),
            sorted((x for x in (h.ranked.candidate.keyword for h in rrf.hits) if x is not None), reverse=True),
        ]
        parts = [0.0 if v is None else 1 / (recall.RRF_K + r.index(v) + 1) for v, r in zip((c.semantic, c.keyword), ranks)]
        fused = (0.5 * parts[0] + 0.5 * parts[1]) * (recall.RRF_K + 1)
        assert hit.ranked.relevance == pytest.approx(lo + (hi - lo) * fused)
    # The first in both parts would be the highest cosine; "both" is second by meaning and by keywords here.
    assert max(h.ranked.relevance for h in rrf.hits) <= hi

    # keyword_weight 0 is semantic-only (the text is not searched), 1 keyword-only.
    dense = await vectors.search(tenant, query(text="camera", top_k=4, keyword_weight=0.0))
    assert not dense.keyword and [h.record.message_id for h in dense.hits] == ["near", "both", "far"]
    assert [h.ranked.relevance for h in dense.hits] == [h.ranked.candidate.semantic for h in dense.hits]
    words = await vectors.search(tenant, query(text="camera", top_k=4, keyword_weight=1.0))
    assert not words.semantic and words.model_id == "" and words.hits[0].record.message_id == "words"
    assert {h.record.message_id for h in words.hits} == {"words", "both", "far"}


async def test_keyword_near_ties_of_a_cut_list_leave_the_order_to_meaning(vectors, tenant):
    """Six messages share only the speaker's name with the query; the keyword part returns 4
    (top_k 1 x 4), all with the same BM25, and more match: they are near-ties, worth nothing,
    so the nearest by meaning wins (min-max would have given each of them the full keyword weight)."""
    now = now_ms()
    short = [point(tenant, angle, message_id=f"short-{angle}", ts=now, text=f"avery: {word}")
             for angle, word in ((40, "tea"), (45, "rain"), (50, "bus"), (55, "jazz"), (60, "snow"))]  # fmt: skip
    best = point(tenant, 10, message_id="best", ts=now, text="avery: we moved to toronto with boxes, cats, plants, books")
    await vectors.upsert(tenant, [*short, best])
    result = await vectors.search(tenant, query(text="avery", top_k=1))
    assert [h.record.message_id for h in result.hits] == ["best"]
    tied = await vectors.search(tenant, query(text="avery", top_k=1, keyword_weight=1.0))
    assert tied.hits[0].ranked.relevance == 0.0 and tied.hits[0].ranked.candidate.keyword > 0
    # Asked for more than match, the list is complete: every other point scores 0, and each
    # listed message's keyword part is its share of the best BM25 (all 1 here, but the long one).
    complete = await vectors.search(tenant, query(text="avery", top_k=2, keyword_weight=1.0))
    assert [h.ranked.relevance for h in complete.hits] == [pytest.approx(1.0)] * 2


def test_fusion_rules_in_their_edge_cases():
    # A cut list whose scores all tie weighs nothing; a complete one is scaled by its best.
    assert recall.keyword_normalized([2.0, 2.0, None], cut=True) == [0.0, 0.0, 0.0]
    assert recall.keyword_normalized([2.0, 1.0, None], cut=False) == [1.0, 0.5, 0.0]
    # Cut: spread over at least a quarter of the best score, from the lowest listed one.
    assert recall.keyword_normalized([8.0, 7.0, 4.0], cut=True) == [1.0, 0.75, 0.0]
    assert recall.keyword_normalized([8.0, 7.0], cut=True) == [0.5, 0.0]
    # The fused score is stated on the span of the cosines; without a span it stays as it is.
    assert recall.on_semantic_scale([1.0, 0.5, 0.0], [0.6, None, 0.2]) == pytest.approx([0.6, 0.4, 0.2])
    assert recall.on_semantic_scale([1.0, 0.25], [0.7, None]) == [1.0, 0.25]


async def test_min_score_in_a_hybrid_search_needs_a_semantic_score(vectors, tenant):
    now = now_ms()
    await _hybrid_corpus(vectors, tenant, now)
    result = await vectors.search(tenant, query(text="camera", top_k=4, min_score=sim(45)))
    # "far" (60 degrees) and "words" (no vector) are below min_score / without a semantic score.
    assert {h.record.message_id for h in result.hits} == {"near", "both"}
    # min_score does not apply to a keyword-only search.
    words = await vectors.search(tenant, query(text="camera", top_k=4, keyword_weight=1.0, min_score=sim(45)))
    assert len(words.hits) == 3


async def test_recency_is_measured_from_the_reference_time(vectors, tenant):
    base = 1_600_000_000_000
    half_life = 10 * DAY
    await vectors.upsert(
        tenant,
        [point(tenant, 20, ts=base - 10 * DAY, text="older"), point(tenant, 20, ts=base, text="at reference"),
         point(tenant, 20, ts=base + 5 * DAY, text="after reference")],
    )  # fmt: skip
    q = query(time_weight=0.5, half_life_ms=half_life, reference_time=base, top_k=3)
    result = await vectors.search(tenant, q)
    score = {h.text: h.ranked.score for h in result.hits}
    assert score["at reference"] == pytest.approx(0.5 * sim(20) + 0.5)
    assert score["older"] == pytest.approx(0.5 * sim(20) + 0.25)  # one half-life before it
    assert score["after reference"] == pytest.approx(score["at reference"])  # later counts as then
    # Without a reference time, recency is measured from now: years-old messages weigh ~0.
    today = await vectors.search(tenant, query(time_weight=0.5, half_life_ms=half_life, top_k=3))
    assert max(h.ranked.score for h in today.hits) == pytest.approx(0.5 * sim(20), abs=1e-6)


async def test_an_adjacent_candidate_lifts_its_neighbour_by_the_documented_rule(vectors, memory, tenant):
    """A reply next to a matching question outranks an equally good message of another
    session; a candidate two messages away (a non-candidate between) gets nothing; system
    messages and control kinds between two messages do not separate them (docs/VECTORS.md,
    "Conversation")."""
    s1 = (
        await memory.save_messages(
            tenant,
            "s1",
            [
                msg("user", "what did you research", 1_000_000),
                msg("system", "delivery report", 1_001_000),
                msg("assistant", "compressed", 1_002_000, kind="summary"),
                msg("assistant", "adoption agencies", 1_003_000),
                msg("user", "no point of its own", 1_004_000),
                msg("assistant", "far away", 1_005_000),
            ],
        )
    ).messages
    [stranger] = (await memory.save_messages(tenant, "s2", [msg("user", "stranger", 1_500_000)])).messages
    question, answer, far = s1[0], s1[3], s1[5]
    await vectors.upsert(
        tenant,
        [
            point(tenant, a, session=m_session, message_id=m.id, ts=m.timestamp, text=m.content, role=m.role)
            for a, m_session, m in ((10, "s1", question), (40, "s1", answer), (60, "s1", far), (38, "s2", stranger))
        ],
    )

    alone = await vectors.search(tenant, query(top_k=4, neighbor_weight=0.0))
    assert [h.text for h in alone.hits] == ["what did you research", "stranger", "adoption agencies", "far away"]
    assert [h.ranked.lift for h in alone.hits] == [0.0] * 4

    lifted = await vectors.search(tenant, query(top_k=4, neighbor_weight=0.3))
    assert [h.text for h in lifted.hits] == ["what did you research", "adoption agencies", "stranger", "far away"]
    lift = {h.text: h.ranked.lift for h in lifted.hits}
    floor = sim(60)  # the lowest candidate's relevance: what a non-candidate counts as
    assert lift["adoption agencies"] == pytest.approx(0.3 * (sim(10) - floor), abs=1e-4)
    assert lift["what did you research"] == pytest.approx(0.3 * (sim(40) - floor), abs=1e-4)
    assert lift["stranger"] == 0.0 and lift["far away"] == 0.0
    for hit in lifted.hits:
        assert hit.ranked.score == pytest.approx(hit.ranked.relevance + hit.ranked.lift, abs=1e-6)

    # Recency weighs against the lifted relevance: (1 - w) * (relevance + lift) + w * recency.
    w, half_life, reference = 0.2, DAY, 2_000_000
    timed = await vectors.search(
        tenant, query(top_k=4, neighbor_weight=0.3, time_weight=w, half_life_ms=half_life, reference_time=reference)
    )
    for hit in timed.hits:
        expected = (1 - w) * (hit.ranked.relevance + hit.ranked.lift) + w * recall.recency(
            hit.record.timestamp, reference, half_life
        )
        assert hit.ranked.score == pytest.approx(expected, abs=1e-6)
    assert {h.text: h.ranked.lift for h in timed.hits} == pytest.approx(lift, abs=1e-6)


async def test_the_default_neighbor_weight_applies_and_only_the_best_candidates_read_windows(vectors, memory, tenant):
    q, a, b = (
        await memory.save_messages(
            tenant, "s1", [msg("user", "q", 1_000_000), msg("assistant", "a", 1_001_000), msg("user", "b", 1_002_000)]
        )
    ).messages
    [o] = (await memory.save_messages(tenant, "s2", [msg("user", "o", 1_000_500)])).messages
    points = [(5, "s1", q), (30, "s1", a), (31, "s2", o), (50, "s1", b)]
    await vectors.upsert(
        tenant, [point(tenant, x, session=s, message_id=m.id, ts=m.timestamp, text=m.content) for x, s, m in points]
    )
    assert recall.RecallQuery().neighbor_weight == recall.DEFAULT_NEIGHBOR_WEIGHT > 0
    result = await vectors.search(tenant, query(top_k=4))
    assert [h.text for h in result.hits] == ["q", "a", "o", "b"]
    assert [h.ranked.lift > 0 for h in result.hits] == [True, True, False, True]

    reads: list[int] = []

    async def counting(requests):
        reads.append(len(requests))
        return await vectors.store.context_windows(tenant, requests)

    scored = recall.relevances([h.ranked.candidate for h in result.hits], query())
    texts = {s.key: s.candidate.record.text for s in scored}
    # o is alone in its session (nothing to lift); only the best top_k x LIFTERS lift.
    assert [texts[s.key] for s in recall.lifters(scored, query(top_k=4))] == ["q", "a", "b"]
    assert recall.LIFTERS == 2
    one = query(top_k=1)
    assert [texts[s.key] for s in recall.lifters(scored, one)] == ["q", "a"]
    adjacent = await recall.adjacency(scored, one, counting)
    assert reads == [2]
    assert {texts.get(k) for k in adjacent[("s1", "id:" + a.id)]} >= {"q", "b"}
    lift = dict(zip((texts[s.key] for s in scored), recall.lifts(scored, adjacent, 0.3)))
    floor = sim(50)
    assert lift["b"] == pytest.approx(0.3 * (sim(30) - floor), abs=1e-4)  # lifted by a, a lifter
    assert lift["a"] == pytest.approx(0.3 * (sim(5) - floor), abs=1e-4)  # by q; b is no lifter
    assert lift["o"] == 0.0
    assert await recall.adjacency(scored, query(neighbor_weight=0.0), counting) == {}
    assert reads == [2]


async def test_a_search_reads_the_lifts_and_the_hits_windows_together(vectors, memory, tenant, monkeypatch):
    """The lift's windows and the context windows of the best candidates by relevance are
    one read; a hit the lift brings in is read after it. Either way each hit's context is its
    window as read alone (windows.WindowMemo)."""
    s1 = (await memory.save_messages(tenant, "s1", [msg("user", f"s1 {n}", 1_000_000 + n) for n in range(8)])).messages
    s2 = (await memory.save_messages(tenant, "s2", [msg("user", f"s2 {n}", 2_000_000 + n) for n in range(8)])).messages
    angles = {s1[2].id: 10, s1[4].id: 20, s1[5].id: 80, s2[3].id: 30, s2[6].id: 40}
    await vectors.upsert(
        tenant,
        [
            point(tenant, angles[m.id], session=session, message_id=m.id, ts=m.timestamp, text=m.content)
            for session, messages in (("s1", s1), ("s2", s2))
            for m in messages
            if m.id in angles
        ],
    )
    reads: list[list[WindowRequest]] = []
    context_windows = vectors.store.context_windows

    async def counting(tenant_, requests):
        reads.append(list(requests))
        return await context_windows(tenant_, requests)

    monkeypatch.setattr(vectors.store, "context_windows", counting)

    async def check(q: RecallQuery) -> list[str]:
        reads.clear()
        result = await vectors.search(tenant, q)
        read = len(reads)
        shown: set[str] = set()  # by better hits, as hits or context: left out of later windows
        for hit in result.hits:
            r = hit.record
            [alone] = await context_windows(
                tenant, [WindowRequest(r.session_id, r.timestamp, r.message_id, r.effective_role, 2, q.control_kinds)]
            )
            shown.add(r.message_id)
            for items, window in ((hit.before, alone.before), (hit.after, alone.after)):
                assert [i.message for i in items] == [m for m in window if m.id not in shown]
                shown.update(m.id for m in window)
        return [h.text for h in result.hits], read

    # The best two keep their places after the lift: one read, lifters' windows and theirs.
    assert await check(query(top_k=2, context_window=2, neighbor_weight=0.3)) == (["s1 2", "s1 4"], 1)
    # A strong lift brings s1 5 (next to s1 4, the second best) in before s2 3: read after it.
    texts, read = await check(query(top_k=3, context_window=2, neighbor_weight=1.0))
    assert texts[:2] == ["s1 2", "s1 4"] and "s1 5" in texts and read == 2


async def test_a_point_without_a_message_id_has_neighbours_by_its_timestamp(vectors, memory, tenant):
    [question, answer] = (
        await memory.save_messages(tenant, "s1", [msg("user", "q", 1_000_000), msg("assistant", "a", 1_001_000)])
    ).messages
    await vectors.upsert(
        tenant,
        [
            point(tenant, 5, session="s1", message_id=question.id, ts=question.timestamp, text="q"),
            point(tenant, 30, session="s1", message_id="", ts=answer.timestamp, role="assistant", text="a"),
            point(tenant, 60, session="s2", message_id="", ts=answer.timestamp, text="elsewhere"),
        ],
    )
    result = await vectors.search(tenant, query(top_k=3, neighbor_weight=0.5))
    lift = {h.text: h.ranked.lift for h in result.hits}
    assert lift["a"] == pytest.approx(0.5 * (sim(5) - sim(60)), abs=1e-4)
    assert lift["q"] == pytest.approx(0.5 * (sim(30) - sim(60)), abs=1e-4)
    assert lift["elsewhere"] == 0.0
