"""Long-term memory entries (docs/CONTEXT.md, "Long-term memory entries": save, search, forget).

Entries are short facts scoped by a caller-chosen string ("g:<group>", "f:<user>").
Storage is metadata records, one per entry:

    namespace "memoryd.entries/<scope>", key = entry id   -> one entry

The entry id is a hash of the normalized text, so a duplicate lands on the same key and
is never stored twice; an entry saved with a caller's key (a LangGraph item key) has the
hash of that key instead, so the key's next save replaces it. Every save and forget is one
Store.write_metadata_counted: the store reads the record, counts the scope's records and
writes in one transaction, with a tenant's writers taking turns. So concurrent saves never
fail for each other, a scope never holds more than its capacity, and one key is one entry
whatever the interleaving.

(Earlier versions kept a counter record per scope, "memoryd.entry-scopes" / "count/<scope>",
written by compare-and-set; forget_scope still removes one left by them.)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from memoryd.domain import events as ev
from memoryd.domain import keywords, paging, recall, search_defaults
from memoryd.domain.errors import FailedPrecondition
from memoryd.domain.limits import Limits
from memoryd.domain.models import now_ms
from memoryd.domain.store import MetadataWrite, Store

ENTRIES_NAMESPACE = "memoryd.entries/"
COUNTER_NAMESPACE = "memoryd.entry-scopes"
MAX_ENTRY_CHARS = 2000
DEFAULT_SCOPE_CAPACITY = 200
DEFAULT_PAGE = 100
# Keyword scores: BM25 over the text, plus this many times BM25 over the tags.
TAG_WEIGHT = 2.0
CONTENT_WEIGHT = 1.0
# Cosine similarity below this adds nothing: unrelated texts still have small positive cosines.
MIN_SEMANTIC = 0.3
_SCAN_PAGE = 1000

log = structlog.get_logger("memoryd.entries")


def entries_namespace(scope: str) -> str:
    return ENTRIES_NAMESPACE + scope


def counter_key(scope: str) -> str:
    return "count/" + scope


def normalize(text: str) -> str:
    """Whitespace runs (any Unicode whitespace) folded to one space, ends trimmed."""
    return " ".join(text.split())


def entry_id(normalized: str) -> str:
    return hashlib.blake2b(normalized.encode("utf-8"), digest_size=12).hexdigest()


def keyed_id(key: str) -> str:
    """The id of the entry saved with `key`: a hash apart from every text's (its own person)."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=12, person=b"entry-key").hexdigest()


def normalize_tags(tags: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(t for t in (normalize(tag) for tag in tags) if t))


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    scope: str
    text: str
    tags: list[str]
    create_time: int
    embedding: list[float] | None = None
    model_id: str = ""
    key: str = ""

    def record(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "text": self.text, "tags": self.tags, "create_time": self.create_time}
        if self.embedding:
            data["embedding"] = self.embedding
            data["model_id"] = self.model_id
        if self.key:
            data["key"] = self.key
        return data

    @classmethod
    def from_record(cls, scope: str, data: dict[str, Any]) -> Entry:
        return cls(
            id=data["id"],
            scope=scope,
            text=data["text"],
            tags=list(data.get("tags") or []),
            create_time=int(data["create_time"]),
            embedding=[float(x) for x in data["embedding"]] if data.get("embedding") else None,
            model_id=data.get("model_id", ""),
            key=data.get("key", ""),
        )


@dataclass(frozen=True, slots=True)
class SaveResult:
    entry: Entry
    deduplicated: bool
    count: int
    capacity: int
    replaced: bool = False


@dataclass(frozen=True, slots=True)
class EntryHit:
    """One SearchEntries hit (`EntryHit` in the contract)."""

    entry: Entry
    score: float
    keyword_score: float
    semantic_score: float


# -- scoring (pure) ---------------------------------------------------------------
def _bm25(query: keywords.Sparse, documents: Sequence[keywords.Sparse]) -> list[float]:
    """BM25 of each document for the query, IDF over these documents (the scope's entries)."""
    frequencies: dict[int, int] = {}
    for document in documents:
        for token in document.indices:
            frequencies[token] = frequencies.get(token, 0) + 1
    return [keywords.score(query, d, frequencies, len(documents)) for d in documents]


def keyword_scores(entries: Sequence[Entry], query: str) -> list[float]:
    """Per entry: BM25 of the query over its text plus TAG_WEIGHT times BM25 over its tags."""
    vector = keywords.query_vector(query)
    if not vector.indices:
        return [0.0] * len(entries)
    text = _bm25(vector, [keywords.document_vector(e.text) for e in entries])
    tags = _bm25(vector, [keywords.document_vector(" ".join(e.tags)) for e in entries])
    return [CONTENT_WEIGHT * t + TAG_WEIGHT * g for t, g in zip(text, tags, strict=True)]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b) or not a:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def rank(
    entries: Sequence[Entry],
    query: str,
    limit: int,
    query_embedding: Sequence[float] = (),
    model_id: str = "",
    keyword_weight: float = recall.DEFAULT_KEYWORD_WEIGHT,
    fusion: recall.Fusion = recall.Fusion.RELATIVE_SCORE,
) -> tuple[list[EntryHit], bool]:
    """Hits best first (ties newest first) and whether the semantic part was used: the same
    fusion as SearchMemory (recall.fuse) of BM25 keyword scores and cosine similarities.

    Without a query text or embedding, the newest entries with score 0.
    """
    newest_first = sorted(entries, key=lambda e: (-e.create_time, e.id))
    use_keywords = bool(query.strip()) and keyword_weight > 0
    use_vectors = bool(query_embedding) and keyword_weight < 1
    if not use_keywords and not use_vectors:
        return [EntryHit(e, 0.0, 0.0, 0.0) for e in newest_first[:limit]], False
    keyword = keyword_scores(newest_first, query) if use_keywords else [0.0] * len(newest_first)
    semantic: list[float | None] = [None] * len(newest_first)
    semantic_used = False
    for i, entry in enumerate(newest_first):
        if (
            use_vectors
            and entry.embedding
            and entry.model_id == model_id
            and len(entry.embedding) == len(query_embedding)
        ):
            semantic_used = True
            similarity = cosine(entry.embedding, query_embedding)
            semantic[i] = similarity if similarity >= MIN_SEMANTIC else None
    found = [i for i in range(len(newest_first)) if keyword[i] > 0 or semantic[i] is not None]
    if not semantic_used:
        scores = recall.keyword_normalized([keyword[i] for i in found], cut=False)  # every entry is scored
    elif not use_keywords:
        scores = [semantic[i] or 0.0 for i in found]
    else:
        scores = recall.fuse([semantic[i] for i in found], [keyword[i] or None for i in found], keyword_weight, fusion)
    hits = [
        EntryHit(newest_first[i], score, keyword[i], semantic[i] or 0.0) for i, score in zip(found, scores, strict=True)
    ]
    hits.sort(key=lambda h: -h.score)  # stable: equal scores stay newest first
    return hits[:limit], semantic_used


# -- forgetting a whole scope (ForgetUser) -----------------------------------------------
async def forget_scope(store: Store, tenant: str, scope: str, batch: int) -> int:
    """Delete every entry of `scope`, `batch` records per transaction (each with the entries'
    entry-changed events); returns how many went. Every transaction also deletes the scope's
    counter, so a SaveEntry racing with it fails its guard and counts afresh (a missing
    counter is rebuilt by counting). Resumable: a later call deletes what is left."""
    removed = 0
    counter = MetadataWrite(COUNTER_NAMESPACE, counter_key(scope), None)
    while True:
        rows = await store.list_metadata(tenant, entries_namespace(scope), None, batch)
        deletes = [MetadataWrite(entries_namespace(scope), row.key, None) for row in rows]
        events = [draft for row in rows for draft in ev.entry_changed(scope, row.key, deleted=True)]
        await store.write_metadata_guarded(tenant, [*deletes, counter], None, events, now_ms())
        removed += len(rows)
        if len(rows) < batch:
            return removed


# -- the service --------------------------------------------------------------------
class Embedder(Protocol):
    """The server-side embedder, when one is configured (shared with VectorRecall)."""

    model_id: str

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class Entries:
    def __init__(
        self,
        store: Store,
        limits: Limits,
        capacity: int = DEFAULT_SCOPE_CAPACITY,
        embedder: Embedder | None = None,
        page_tokens: paging.PageTokens | None = None,
        defaults: recall.RecallDefaults = recall.RecallDefaults(),
    ) -> None:
        self.store = store
        self.limits = limits
        self.capacity = capacity
        self.embedder = embedder
        self.page_tokens = page_tokens or paging.PageTokens.ephemeral()
        self.defaults = defaults

    async def _embed(self, text: str) -> tuple[list[float], str]:
        """The server embedder's vector of `text`, or nothing: search silently stays keyword-only."""
        if self.embedder is None or not text:
            return [], ""
        try:
            (vector,) = await self.embedder.embed([text])
        except Exception as exc:  # noqa: BLE001 - an unavailable embedder is not an error here
            log.info("entry_embedding_unavailable", error_type=type(exc).__name__)
            return [], ""
        return list(vector), self.embedder.model_id

    async def _all(self, tenant: str, scope: str) -> list[Entry]:
        entries: list[Entry] = []
        after = None
        while True:
            rows = await self.store.list_metadata(tenant, entries_namespace(scope), after, _SCAN_PAGE)
            entries += [Entry.from_record(scope, r.data) for r in rows]
            if len(rows) < _SCAN_PAGE:
                return entries
            after = rows[-1].key

    async def save(
        self,
        tenant: str,
        scope: str,
        text: str,
        tags: Sequence[str],
        embedding: Sequence[float] = (),
        model_id: str = "",
        key: str = "",
    ) -> SaveResult:
        """Input was validated: normalized text is 1..MAX_ENTRY_CHARS characters. With `key`,
        the key's entry is created or replaced; without, a stored duplicate is returned."""
        normalized = normalize(text)
        id_ = keyed_id(key) if key else entry_id(normalized)
        if not embedding:
            embedding, model_id = await self._embed(normalized)
        entry = Entry(
            id=id_,
            scope=scope,
            text=normalized,
            tags=normalize_tags(tags),
            create_time=now_ms(),
            embedding=[float(x) for x in embedding] or None,
            model_id=model_id if embedding else "",
            key=key,
        )
        outcome = await self.store.write_metadata_counted(
            tenant,
            MetadataWrite(entries_namespace(scope), id_, entry.record()),
            self.capacity,
            bool(key),
            ev.entry_changed(scope, id_, deleted=False),
            entry.create_time,
        )
        if outcome.written:
            return SaveResult(entry, False, outcome.count, self.capacity, replaced=outcome.previous is not None)
        if outcome.previous is not None:
            return SaveResult(Entry.from_record(scope, outcome.previous), True, outcome.count, self.capacity)
        raise FailedPrecondition(
            f"scope {scope!r} holds {outcome.count} entries, its maximum; forget or merge entries before saving more",
            reason="ENTRY_SCOPE_FULL",
            metadata={"scope": scope, "count": str(outcome.count), "capacity": str(self.capacity)},
        )

    async def forget(self, tenant: str, scope: str, id_: str = "", key: str = "") -> bool:
        """Deletes the entry `id_` (or the one saved with `key`); False when there was none."""
        id_ = keyed_id(key) if key else id_
        outcome = await self.store.write_metadata_counted(
            tenant,
            MetadataWrite(entries_namespace(scope), id_, None),
            self.capacity,
            False,
            ev.entry_changed(scope, id_, deleted=True),
            now_ms(),
        )
        return outcome.written

    async def search(
        self,
        tenant: str,
        scope: str,
        query: str,
        limit: int,
        query_embedding: Sequence[float] = (),
        model_id: str = "",
        keyword_weight: float | None = None,
        fusion: recall.Fusion | None = None,
    ) -> tuple[list[EntryHit], bool]:
        settled = search_defaults.settle(
            search_defaults.Search.ENTRIES,
            search_defaults.Asked(top_k=limit, keyword_weight=keyword_weight, fusion=fusion),
            self.defaults,
        )
        size = min(settled.top_k, self.limits.max_page_size)
        weight = settled.keyword_weight
        if not query_embedding and query.strip() and weight < 1:
            query_embedding, model_id = await self._embed(query)
        entries = await self._all(tenant, scope)
        return rank(entries, query, size, query_embedding, model_id, weight, settled.fusion)

    async def list_entries(self, tenant: str, scope: str, page_size: int, page_token: str) -> tuple[list[Entry], str]:
        """Newest first. A scope holds at most `capacity` entries of bounded text, so it is read
        whole and pages need no byte bound."""
        size = min(page_size or DEFAULT_PAGE, self.limits.max_page_size)
        token_scope = ("entries", scope)
        position = await self.page_tokens.decode(tenant, token_scope, page_token)
        ordered = sorted(await self._all(tenant, scope), key=lambda e: (-e.create_time, e.id))
        if position is not None:
            after = (-int(position["t"]), str(position["id"]))
            ordered = [e for e in ordered if (-e.create_time, e.id) > after]
        page = ordered[:size]
        token = ""
        if len(ordered) > size:
            token = await self.page_tokens.encode(tenant, token_scope, {"t": page[-1].create_time, "id": page[-1].id})
        return page, token
