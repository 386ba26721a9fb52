"""The `bm25` keyword vector's tokens and weights are fixed: a stored keyword point means
what it meant when it was indexed, so a change of tokenizer, stemmer, stopwords or BM25
parameters (or a qdrant-edge-py release that hashes tokens differently) must fail here and
become a new vector name and a re-index (server/memoryd/domain/keywords.py)."""

from __future__ import annotations

import pytest

from memoryd.domain import keywords


# The indexed vector's BM25 parameters: k1, b, average length (tokens).
K1, B, AVG_LEN = 1.2, 0.3, 12.0


def tf_weight(tokens: int, frequency: int = 1) -> float:
    """BM25's document weight of a token, the text having `tokens` tokens after stopwords."""
    return frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * tokens / AVG_LEN))


# (text, its token ids): golden values of the indexed vector `bm25`.
DOCUMENTS = [
    # Stopwords go; "training" is stemmed to the "train" of the next text (1190790875).
    ("These days my training is all about fencing.", [520205939, 1137627226, 1190790875]),
    ("The train was late again, I read on the platform.", [335348587, 845019103, 859229416, 1190790875]),
    # Chinese is segmented into words (no spaces between them); 我 is a stopword.
    ("我昨天和朋友去山里徒步旅行", [40890930, 368704119, 481675760, 546894819, 1484544497, 1826002346]),
]


@pytest.mark.parametrize(("text", "ids"), DOCUMENTS, ids=["training", "train", "chinese"])
def test_document_tokens_and_weights_are_the_indexed_ones(text, ids):
    vector = keywords.document_vector(text)
    assert vector.indices == ids
    assert vector.values == pytest.approx([tf_weight(len(ids))] * len(ids), rel=1e-6)


def test_repeated_words_count_with_saturation_and_case_is_folded():
    [single] = keywords.document_vector("hiking").values
    [repeated] = keywords.document_vector("Hiking HIKING hiking").values
    assert single == pytest.approx(tf_weight(1))
    assert repeated == pytest.approx(tf_weight(3, frequency=3))
    assert keywords.document_vector("HIKING").indices == keywords.document_vector("hiking").indices


def test_query_tokens_are_the_documents_tokens_weighted_one():
    query = keywords.query_vector("Which sport is Avery training for currently?")
    assert 1190790875 in query.indices  # "training": the stem every document form shares
    assert len(query.indices) == 4 and set(query.values) == {1.0}
    assert keywords.query_vector("我和朋友去徒步").indices == sorted(
        set(keywords.document_vector("朋友 去 徒步").indices)
    )
    assert keywords.query_vector("the and of") == keywords.Sparse([], [])
