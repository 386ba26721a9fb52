"""The `bm25` keyword vector's tokens and weights are fixed: a stored keyword point means
what it meant when it was indexed, so a change of tokenizer, stemmer, stopwords or BM25
parameters (or a qdrant-edge-py release that hashes tokens differently) must fail here and
become a new vector name and a re-index (server/memoryd/domain/keywords.py)."""

from __future__ import annotations

import unicodedata

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
    # A query of kanji: its words as before, plus the bigrams that find Japanese texts (which
    # Chinese texts never hold).
    chinese = set(keywords.query_vector("我和朋友去徒步").indices)
    words = set(keywords.document_vector("朋友 去 徒步").indices)
    assert words < chinese  # the bigram tokens: "東京" and "設計" below find Japanese texts with them
    assert keywords.query_vector("the and of") == keywords.Sparse([], [])


# -- Japanese: kana and kanji bigrams (keywords.py, "Japanese") --------------------------------
def test_japanese_texts_add_bigram_tokens_and_chinese_texts_do_not():
    """Golden: a text with kana holds the tokenizer's tokens and one per bigram; NFD, NFC and
    half-width forms index alike."""
    text = "データを使う"
    assert keywords.document_vector(text).indices == [
        869033, 223207206, 903021252, 1317041014, 1762814942, 2105535724
    ]
    for form in ("NFD", "NFKD"):
        assert keywords.document_vector(unicodedata.normalize(form, text)) == keywords.document_vector(text)
    assert keywords.document_vector("ﾃﾞｰﾀを使う") == keywords.document_vector(text)
    assert keywords.document_vector("我昨天和朋友去山里徒步旅行").indices == DOCUMENTS[2][1]  # unchanged


# A small Japanese recall check, beside the Chinese one (tests/summaries/test_entries.py): each
# query names something one document says, in a form the tokenizer alone does not match
# (conjugated verbs, words inside longer runs, NFD and half-width kana, kanji compounds).
JAPANESE = [
    "私はPythonでADKを使っています",
    "昨日は東京で友達と寿司を食べました",
    "毎朝コーヒーを飲みながらニュースを読む",
    unicodedata.normalize("NFD", "来週からデータベースの設計を始めます"),
    "猫が好きで、週末は保護猫カフェに行く",
    "我昨天和朋友去山里徒步旅行",
    "The train was late again, I read on the platform.",
]
JAPANESE_QUERIES = [
    ("使って", 0), ("東京", 1), ("寿司を食べた", 1), ("コーヒー", 2), ("ニュースを読んだ", 2),
    ("ﾃﾞｰﾀﾍﾞｰｽ", 3), ("設計", 3), ("猫カフェ", 4), ("保護", 4), ("徒步", 5),
]  # fmt: skip


def test_japanese_recall_at_1():
    documents = [keywords.document_vector(t) for t in JAPANESE]
    frequencies: dict[int, int] = {}
    for document in documents:
        for token in document.indices:
            frequencies[token] = frequencies.get(token, 0) + 1
    found = 0
    for query, expected in JAPANESE_QUERIES:
        vector = keywords.query_vector(query)
        scores = [keywords.score(vector, d, frequencies, len(documents)) for d in documents]
        found += max(range(len(scores)), key=scores.__getitem__) == expected and scores[expected] > 0
    assert found == len(JAPANESE_QUERIES)
