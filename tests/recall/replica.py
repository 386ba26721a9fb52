"""An offline replica of SearchMemory for sweeps of the ranking knobs (tests/recall/sweep.py).

The server's ranking is domain/recall.py, pure; what the engine adds is the candidates. Here
they are computed exactly, in-process, the way both Qdrant adapters define them: the
`top_k x 4` nearest turns by cosine (all-MiniLM-L6-v2 vectors, cached on disk), the
`top_k x 4` best by BM25 over the conversation (IDF over its turns, `keywords.idf`), a keyword
candidate with its turn's cosine, a dense one with its BM25 when it is a keyword candidate too
(storage/qdrant/base.py, `merge`). Then the same `recall.relevances`, `adjacency`, `rank` and
`select_hits` the server runs, over a window reader of the conversation's turns. So a sweep
measures what the server would, within the order an engine gives equal scores, and can vary
what the server fixes at indexing time (BM25's b, what a keyword point's text holds) without
re-indexing anything.

Not part of scripts/test; the bench (tests/recall/bench.py) is the measurement through a real
server that the docs' tables come from.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from memoryd.domain import keywords, recall
from memoryd.domain.models import Message
from memoryd.domain.vectors import Candidate, VectorRecord
from memoryd.domain.windows import Window, WindowRequest
from tests.recall.datasets import Conversation, Turn

# What a keyword point holds for a turn: its sparse vector (default: the server's).
KeywordDocument = Callable[[Turn], keywords.Sparse]
MODEL_ID = "st:all-MiniLM-L6-v2"


def server_document(turn: Turn) -> keywords.Sparse:
    return keywords.document_vector(turn.content)


class EmbeddingCache:
    """Vectors by text, in a SQLite file outside the repository; missing ones are embedded."""

    def __init__(self, path: Path, embed: Callable[[list[str]], Any] | None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, check_same_thread=False)  # the bench's embedder answers from threads
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vector BLOB)")
        self.embed = embed

    @staticmethod
    def _hash(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        hashes = [self._hash(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, blob in self.db.execute(f"SELECT hash, vector FROM vectors WHERE hash IN ({marks})", chunk):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = list(dict.fromkeys(t for t, h in zip(texts, hashes) if h not in found))
        if missing:
            if self.embed is None:
                raise SystemExit(f"{len(missing)} texts have no cached vector and no model is loaded")
            for start in range(0, len(missing), 256):
                batch = missing[start : start + 256]
                rows = [(self._hash(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in zip(batch, self.embed(batch))]
                self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
                self.db.commit()
                found.update((h, np.frombuffer(b, dtype=np.float32)) for h, b in rows)
        return np.stack([found[h] for h in hashes])


@dataclass
class KeywordIndex:
    """BM25 postings of one conversation's keyword points."""

    postings: dict[int, list[tuple[int, float]]]
    documents: int

    @classmethod
    def build(cls, turns: Sequence[Turn], document: KeywordDocument) -> KeywordIndex:
        postings: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for i, turn in enumerate(turns):
            vector = document(turn)
            for token, weight in zip(vector.indices, vector.values):
                postings[token].append((i, weight))
        return cls(dict(postings), len(turns))

    def scores(self, query: keywords.Sparse) -> dict[int, float]:
        """BM25 of every turn that has a query token (the engine's sparse search)."""
        found: dict[int, float] = defaultdict(float)
        for token in query.indices:
            rows = self.postings.get(token, ())
            idf = keywords.idf(len(rows), self.documents)
            for i, weight in rows:
                found[i] += idf * weight
        return found


@dataclass
class Indexed:
    """One conversation as the server would hold it: records, vectors, keyword points."""

    conversation: Conversation
    vectors: np.ndarray
    keyword_indexes: dict[str, KeywordIndex] = field(default_factory=dict)
    # (question, candidate limit, parts, keyword points): the engine's answer, the same for
    # every setting of the ranking knobs
    answers: dict[tuple[str, int, bool, bool, str], list[Candidate]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.turns = self.conversation.turns
        self.records = [
            VectorRecord(t.session, t.timestamp, MODEL_ID, t.id, t.role, speaker_label=t.speaker, sender_id=t.speaker,
                         text=t.content)
            for t in self.turns
        ]  # fmt: skip
        self.messages = [
            Message(t.role, t.content, timestamp=t.timestamp, id=t.id, seq=i + 1) for i, t in enumerate(self.turns)
        ]
        by_session: dict[str, list[int]] = defaultdict(list)
        for i, t in enumerate(self.turns):
            by_session[t.session].append(i)
        self.sessions = {s: sorted(rows, key=lambda i: (self.turns[i].timestamp, i)) for s, rows in by_session.items()}
        self.position = {i: (s, p) for s, rows in self.sessions.items() for p, i in enumerate(rows)}
        self.row_of = {t.id: i for i, t in enumerate(self.turns)}

    def keyword_index(self, name: str, document: KeywordDocument) -> KeywordIndex:
        if name not in self.keyword_indexes:
            self.keyword_indexes[name] = KeywordIndex.build(self.turns, document)
        return self.keyword_indexes[name]

    async def read(self, requests: Sequence[WindowRequest]) -> list[Window]:
        windows = []
        for request in requests:
            row = self.row_of.get(request.message_id)
            if row is None:
                windows.append(Window())
                continue
            session, p = self.position[row]
            rows = self.sessions[session]
            before = rows[max(0, p - request.size) : p]
            after = rows[p + 1 : p + 1 + request.size]
            windows.append(Window(self.messages[row], [self.messages[i] for i in before], [self.messages[i] for i in after]))
        return windows


def _top(scores: np.ndarray | dict[int, float], limit: int) -> list[int]:
    if isinstance(scores, dict):
        return [i for i, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]]
    order = np.argsort(-scores, kind="stable")
    return [int(i) for i in order[:limit]]


def candidates(indexed: Indexed, query: recall.RecallQuery, vector: np.ndarray | None, keyword: KeywordIndex) -> list[Candidate]:
    """What both Qdrant adapters return for the query (storage/qdrant/base.py)."""
    limit = query.candidate_limit
    cosines = indexed.vectors @ vector if vector is not None else None
    dense = _top(cosines, limit) if query.semantic and cosines is not None else []
    bm25 = keyword.scores(keywords.query_vector(query.text)) if query.keyword else {}
    by_keyword = _top(bm25, limit)
    listed = {i: bm25[i] for i in by_keyword}
    found = []
    for i in dense:
        found.append(Candidate(indexed.turns[i].id, float(cosines[i]), indexed.records[i], listed.get(i)))
    taken = set(dense)
    for i in by_keyword:
        if i not in taken:
            semantic = float(cosines[i]) if query.semantic and cosines is not None else None
            found.append(Candidate(indexed.turns[i].id, semantic, indexed.records[i], listed[i]))
    return found


async def search(
    indexed: Indexed, query: recall.RecallQuery, vector: np.ndarray | None, keyword: KeywordIndex, now: int,
    keyword_name: str = "server",
) -> list[recall.RecallHit]:
    key = (query.text, query.candidate_limit, query.semantic, query.keyword, keyword_name)
    if key not in indexed.answers:
        indexed.answers[key] = candidates(indexed, query, vector, keyword)
    scored = recall.relevances(indexed.answers[key], query)
    adjacent = await recall.adjacency(scored, query, indexed.read)
    ranked = recall.rank(scored, query, now, adjacent)
    return await recall.select_hits(ranked, query, indexed.read)


@dataclass
class Outcome:
    recall: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def mean(self, category: str | None = None) -> float:
        values = self.recall[category] if category else [v for vs in self.recall.values() for v in vs]
        return 100 * sum(values) / len(values) if values else math.nan


@dataclass
class QuestionSet:
    name: str
    indexed: list[Indexed]
    query_vectors: list[np.ndarray]  # per conversation: one row per question

    @classmethod
    def build(cls, name: str, conversations: Sequence[Conversation], cache: EmbeddingCache) -> QuestionSet:
        indexed, queries = [], []
        for c in conversations:
            indexed.append(Indexed(c, cache.vectors([t.content for t in c.turns])))
            queries.append(cache.vectors([q.text for q in c.questions]) if c.questions else np.zeros((0, 384)))
        return cls(name, indexed, queries)

    @property
    def questions(self) -> int:
        return sum(len(i.conversation.questions) for i in self.indexed)

    def measure(
        self, fields: dict[str, Any], k: int, document: tuple[str, KeywordDocument] = ("server", server_document)
    ) -> Outcome:
        """Evidence recall of every question at `top_k` k, the request `fields` set (as in
        SearchMemoryRequest; `half_life_hours` too), keyword points made by `document`."""
        return asyncio.run(self._measure(fields, k, document))

    async def _measure(self, fields: dict[str, Any], k: int, document: tuple[str, KeywordDocument]) -> Outcome:
        outcome = Outcome()
        name, make = document
        values = dict(fields)
        if "half_life_hours" in values:
            values["half_life_ms"] = int(values.pop("half_life_hours") * 3_600_000)
        if "fusion" in values:
            values["fusion"] = recall.Fusion(values["fusion"])
        base = replace(recall.RecallQuery(top_k=k, context_window=0, model_id=MODEL_ID), **values)
        for indexed, vectors in zip(self.indexed, self.query_vectors):
            keyword = indexed.keyword_index(name, make)
            now = indexed.conversation.asked_at
            for question, vector in zip(indexed.conversation.questions, vectors):
                query = replace(base, text=question.text, vector=vector.tolist())
                hits = await search(indexed, query, vector, keyword, now, name)
                found = {h.record.message_id for h in hits}
                outcome.recall[question.category].append(sum(e in found for e in question.evidence) / len(question.evidence))
        return outcome
