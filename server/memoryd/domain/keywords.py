"""BM25 term weights of a text, for keyword search (SearchMemory's keyword points on both
Qdrant adapters, SearchEntries in Python). A text becomes a sparse vector of token ids with
BM25 term-frequency weights, computed in-process by qdrant-edge-py's Bm25 (a tokenizer and
weighting, no engine): the adapters store it as the named sparse vector `bm25` of a
collection with Qdrant's IDF modifier, so the engine multiplies each query token's weight by
its IDF over the tenant's points at search time; `score` does the same over given documents.

Tokenization: Qdrant's multilingual tokenizer (word segmentation for Chinese and Japanese,
Unicode word boundaries elsewhere), lower-cased, English and Chinese stopwords removed,
English (Snowball) stemming. Queries use the same tokenizer, each token weighted 1. Only
stems are indexed: indexing each word's surface form as well (so that "training" matches
"training" above the "train" of "the train was late") was measured and trades LoCoMo's
recall for the recency set's at every weight of the forms (docs/RECALL.md, "Keyword tokens").

Japanese: the multilingual tokenizer segments text with kana inconsistently (in
"私はPythonでADKを使っています" it finds no unit that "使って" has), so a text holding kana is
NFKC-normalized (NFD and half-width kana become the usual forms) and, besides the
tokenizer's tokens, indexes every character bigram of its runs of kana and kanji (a run of
one character: that character), each as one token (`_bigram_word`). A query with kana is
tokenized the same way; a query of kanji without kana (Japanese or Chinese: no telling)
gets its tokens as before plus the bigram tokens of its kanji runs, so "設計" finds
"データベースを設計する" and a Chinese query still finds what it found (Chinese texts hold
no bigram tokens). So any two adjacent characters of a stored Japanese text find it. Texts
without kana (Chinese among them) are indexed exactly as before; points indexed before the
bigrams were added keep their tokens and match as they did, and gain the bigrams when they
are indexed again.

Changing any of these parameters changes what old points mean: a new version of them is a
new sparse vector name and a re-index, never an edit here (tests/vectors/test_keyword_tokens.py
pins the tokens and weights of `bm25`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from memoryd.bm25 import Bm25

# BM25's term-frequency saturation (the usual value), length normalization, and the document
# length (tokens, after stopwords) it is relative to. Chat turns are short and the longer
# ones hold more of what questions ask about: on LoCoMo, b 0.3 instead of the usual 0.75
# finds more evidence (docs/RECALL.md, "BM25: b = 0.3"); some normalization remains so
# that a long reply does not match every word. LoCoMo turns: ~11 tokens after stopwords.
K1 = 1.2
B = 0.3
AVG_LEN = 12.0


@dataclass(frozen=True, slots=True)
class Sparse:
    indices: list[int]
    values: list[float]


# Qdrant's tokenizer and weighting, run by memoryd/bm25.py (a library, no engine): the
# domain imports no driver.
_MODEL = Bm25(K1, B, AVG_LEN)


# Kana (hiragana, katakana with its phonetic extensions and half-width forms, the prolonged
# sound mark) mark a text as Japanese; runs of kana and kanji (CJK ideographs, 々 〆 ヶ) are
# what its bigrams are cut from.
_KANA = re.compile("[\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_JAPANESE_RUN = re.compile(
    "[\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3005\u3006\u30f6\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
)


def _bigram_word(chars: str) -> str:
    """One or two characters as a word the tokenizer keeps whole: "jp" and their code points in hex."""
    return "jp" + "x".join(f"{ord(c):x}" for c in chars)


def _bigram_words(text: str) -> str:
    """The bigram words of the text's kana and kanji runs, space-separated."""
    words: list[str] = []
    for run in _JAPANESE_RUN.findall(text):
        words += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    return " ".join(_bigram_word(w) for w in words)


def _keyword_text(text: str) -> str:
    """What is tokenized: the text itself, or for a text with kana its NFKC form followed by
    the bigram words of its kana and kanji runs (module docstring)."""
    if not _KANA.search(text):
        return text
    text = unicodedata.normalize("NFKC", text)
    return text + " " + _bigram_words(text)


def document_vector(text: str) -> Sparse:
    return Sparse(*_MODEL.document(_keyword_text(text)))


def query_vector(text: str) -> Sparse:
    """The query's tokens, each weighted 1 (empty when the text has no searchable token)."""
    indices = set(_MODEL.query(_keyword_text(text))[0])
    if not _KANA.search(text) and (kanji := _bigram_words(unicodedata.normalize("NFKC", text))):
        indices |= set(_MODEL.query(kanji)[0])  # apart: the text's own tokens stay as they were
    return Sparse(sorted(indices), [1.0] * len(indices))


def idf(document_frequency: int, documents: int) -> float:
    """Qdrant's IDF (the BM25 one, never negative)."""
    return math.log((documents - document_frequency + 0.5) / (document_frequency + 0.5) + 1.0)


def score(query: Sparse, document: Sparse, frequencies: dict[int, int], documents: int) -> float:
    """BM25 of `document` for `query`, IDF over `documents` documents whose token document
    frequencies are `frequencies` (what the engine computes for a keyword point)."""
    weights = dict(zip(document.indices, document.values, strict=True))
    return sum(idf(frequencies.get(t, 0), documents) * weights[t] for t in query.indices if t in weights)
