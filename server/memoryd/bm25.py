"""The BM25 tokenizer and term weighting of keyword search: qdrant-edge-py's Bm25 (a
tokenizer and weighting, no engine), used as a library. domain/keywords.py holds the
parameters and what they mean; this module only runs them, so the domain imports no driver.

Tokenization: Qdrant's multilingual tokenizer (word segmentation for Chinese and Japanese,
Unicode word boundaries elsewhere), lower-cased, English and Chinese stopwords removed,
English (Snowball) stemming. Queries use the same tokenizer, each token weighted 1. What
the domain adds (Japanese bigrams) is in domain/keywords.py.
"""

from __future__ import annotations

import qdrant_edge as qe


class Bm25:
    def __init__(self, k1: float, b: float, avg_len: float) -> None:
        self._model = qe.Bm25(
            qe.Bm25Config(
                k=k1,
                b=b,
                avg_len=avg_len,
                tokenizer=qe.TokenizerType.Multilingual,
                language="english",
                stopwords=qe.StopwordsSet(languages={qe.Language.English, qe.Language.Chinese}),
            )
        )

    def document(self, text: str) -> tuple[list[int], list[float]]:
        """Token ids and BM25 term-frequency weights of a document."""
        vector = self._model.embed_document(text)
        return list(vector.indices), list(vector.values)

    def query(self, text: str) -> tuple[list[int], list[float]]:
        """The query's token ids, each weighted 1."""
        vector = self._model.embed_query(text)
        return list(vector.indices), list(vector.values)
