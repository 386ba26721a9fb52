"""The fusion's agreement check (domain/recall.py, `semantic_agreement`, `fusion_keyword_weight`):
a semantic part that does not rank the keyword part's clear matches above the other candidates
(an English model reading Chinese) loses weight; pure functions, no index."""

from __future__ import annotations

import pytest

from memoryd.domain import recall
from memoryd.domain.vectors import Candidate, VectorRecord


def candidates(cosines: list[float], bm25: list[float | None]) -> list[Candidate]:
    return [
        Candidate(f"p{i}", c, VectorRecord("s", 1000 + i, "m", f"m{i}", "user", text=f"text {i}"), k)
        for i, (c, k) in enumerate(zip(cosines, bm25))
    ]


# Twelve candidates: three clear keyword matches (BM25 9, 8, 7) and nine that only share a
# common word with the query or none (BM25 1 or no keyword score).
BM25 = [9.0, 8.0, 7.0, 1.0, 1.0, 1.0, None, None, None, None, None, None]
AGREEING = [0.80, 0.75, 0.70, 0.40, 0.35, 0.30, 0.60, 0.55, 0.50, 0.45, 0.25, 0.20]  # the matches first
DISAGREEING = [0.52, 0.51, 0.50, 0.90, 0.88, 0.86, 0.84, 0.82, 0.80, 0.78, 0.76, 0.53]  # below 9 of 12


def test_a_semantic_part_that_ranks_the_clear_keyword_matches_first_keeps_its_weight():
    normalized = recall.keyword_normalized(BM25, cut=False)
    assert recall.semantic_agreement(AGREEING, normalized) == pytest.approx((11 + 10 + 9) / 3 / 12)
    fused = recall.fusion_of(AGREEING, BM25, 0.5, recall.Fusion.RELATIVE_SCORE)
    assert fused.keyword_weight == 0.5
    assert fused.relevance == recall.fuse(AGREEING, BM25, 0.5, recall.Fusion.RELATIVE_SCORE)


def test_one_that_ranks_them_among_the_weakest_loses_weight_in_proportion():
    normalized = recall.keyword_normalized(BM25, cut=False)
    agreement = recall.semantic_agreement(DISAGREEING, normalized)
    assert agreement == pytest.approx((2 + 1 + 0) / 3 / 12)  # above 2, 1 and 0 of the 12 cosines
    semantic = 0.5 * agreement / recall.AGREEMENT_FULL
    fused = recall.fusion_of(DISAGREEING, BM25, 0.5, recall.Fusion.RELATIVE_SCORE)
    assert fused.keyword_weight == pytest.approx(0.5 / (0.5 + semantic))
    # The clear keyword matches now lead, as a keyword-only search would have them.
    order = sorted(range(12), key=lambda i: -fused.relevance[i])
    assert order[:3] == [0, 1, 2]
    # The same weights for reciprocal-rank fusion.
    assert recall.fusion_of(DISAGREEING, BM25, 0.5, recall.Fusion.RECIPROCAL_RANK).keyword_weight == fused.keyword_weight


def test_the_check_needs_clear_keyword_matches_and_enough_candidates():
    # A cut keyword list of near-ties has no clear match: meaning decides, unchecked.
    ties = [2.0] * 6 + [None] * 6
    assert recall.semantic_agreement(DISAGREEING, recall.keyword_normalized(ties, cut=True)) is None
    assert recall.fusion_of(DISAGREEING, ties, 0.5, recall.Fusion.RELATIVE_SCORE, keyword_cut=True).keyword_weight == 0.5
    # Fewer semantic scores than AGREEMENT_MIN_CANDIDATES: too few to tell; exactly that many: checked.
    n = recall.AGREEMENT_MIN_CANDIDATES
    few = recall.keyword_normalized(BM25[: n - 1], cut=False)
    assert recall.semantic_agreement(DISAGREEING[: n - 1], few) is None
    assert recall.semantic_agreement(DISAGREEING[:n], recall.keyword_normalized(BM25[:n], cut=False)) is not None
    # Only the best AGREEMENT_TOP clear matches count: a fourth, ranked first by meaning, does not.
    four = [9.0, 8.0, 7.0, 6.5, *BM25[4:]]
    cosines = [*DISAGREEING[:3], 0.99, *DISAGREEING[4:]]
    assert recall.semantic_agreement(cosines, recall.keyword_normalized(four, cut=False)) == pytest.approx(3 / 36)
    # Agreement at or above AGREEMENT_FULL keeps the weight; none (unchecked) too.
    assert recall.fusion_keyword_weight(0.5, recall.AGREEMENT_FULL) == 0.5
    assert recall.fusion_keyword_weight(0.5, None) == 0.5
    assert recall.fusion_keyword_weight(0.5, 0.0) == 1.0


def test_relevances_report_the_weight_the_semantic_part_kept():
    query = recall.RecallQuery(vector=[1.0], model_id="m", text="words", top_k=10, keyword_weight=0.5)
    agreeing = recall.relevances(candidates(AGREEING, BM25), query)
    assert {s.semantic_weight for s in agreeing} == {0.5}
    disagreeing = recall.relevances(candidates(DISAGREEING, BM25), query)
    expected = 1 - recall.fusion_of(DISAGREEING, BM25, 0.5, recall.Fusion.RELATIVE_SCORE).keyword_weight
    assert [s.semantic_weight for s in disagreeing] == [pytest.approx(expected)] * 12 and expected < 0.2
    ranked = recall.rank(disagreeing, query, 2000)
    assert recall.semantic_weight(query, True, True, ranked) == pytest.approx(expected)
    assert recall.semantic_weight(query, True, True, []) == 0.5  # nothing ranked: as asked
    assert recall.semantic_weight(query, True, False, ranked) == 1.0
    assert recall.semantic_weight(query, False, True, ranked) == 0.0


def test_the_order_an_engine_returns_equal_keyword_scores_in_never_matters():
    # Four clear matches share the best BM25; the check takes three of them by semantic score,
    # whichever order the candidates arrived in (adapters return ties in their own order).
    bm25 = [5.0, 5.0, 5.0, 5.0, 1.0, 1.0, None, None, None, None, None, None]
    cosines = [0.10, 0.90, 0.80, 0.70, 0.60, 0.50, 0.40, 0.30, 0.20, 0.15, 0.12, 0.11]
    normalized = recall.keyword_normalized(bm25, cut=False)
    expected = recall.semantic_agreement(cosines, normalized)
    assert expected == pytest.approx((11 + 10 + 9) / 3 / 12)
    order = [3, 2, 1, 0, 4, 5, 6, 7, 8, 9, 10, 11]
    assert recall.semantic_agreement([cosines[i] for i in order], [normalized[i] for i in order]) == expected
