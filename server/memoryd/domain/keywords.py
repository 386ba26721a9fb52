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

Changing any of these parameters changes what old points mean: a new version of them is a
new sparse vector name and a re-index, never an edit here (tests/vectors/test_keyword_tokens.py
pins the tokens and weights of `bm25`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import qdrant_edge as qe

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


_MODEL = qe.Bm25(
    qe.Bm25Config(
        k=K1,
        b=B,
        avg_len=AVG_LEN,
        tokenizer=qe.TokenizerType.Multilingual,
        language="english",
        stopwords=qe.StopwordsSet(languages={qe.Language.English, qe.Language.Chinese}),
    )
)


def document_vector(text: str) -> Sparse:
    vector = _MODEL.embed_document(text)
    return Sparse(list(vector.indices), list(vector.values))


def query_vector(text: str) -> Sparse:
    """The query's tokens, each weighted 1 (empty when the text has no searchable token)."""
    vector = _MODEL.embed_query(text)
    return Sparse(list(vector.indices), list(vector.values))


def idf(document_frequency: int, documents: int) -> float:
    """Qdrant's IDF (the BM25 one, never negative)."""
    return math.log((documents - document_frequency + 0.5) / (document_frequency + 0.5) + 1.0)


def score(query: Sparse, document: Sparse, frequencies: dict[int, int], documents: int) -> float:
    """BM25 of `document` for `query`, IDF over `documents` documents whose token document
    frequencies are `frequencies` (what the engine computes for a keyword point)."""
    weights = dict(zip(document.indices, document.values, strict=True))
    return sum(idf(frequencies.get(t, 0), documents) * weights[t] for t in query.indices if t in weights)
