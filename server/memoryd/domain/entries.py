"""Long-term memory entries (docs/CONTEXT.md, "Long-term memory entries": save, search, forget).

Entries are short facts scoped by a caller-chosen string ("g:<group>", "f:<user>").
Storage is metadata records written with the Store's guarded (compare-and-set) write, so
both adapters behave the same:

    namespace "memoryd.entries/<scope>", key = entry id   -> one entry
    namespace "memoryd.entry-scopes", key "count/<scope>" -> {"count": n}

The entry id is a hash of the normalized text, so a duplicate lands on the same key and
is never stored twice. Every save and forget also writes the scope's counter guarded on
its previous value, so two racing saves can never push a scope past its cap. A missing
counter (never written, or removed through MetadataService) is rebuilt by counting.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from memoryd.domain import events as ev
from memoryd.domain import paging
from memoryd.domain.errors import FailedPrecondition
from memoryd.domain.limits import Limits
from memoryd.domain.models import now_ms
from memoryd.domain.store import MetadataGuard, MetadataWrite, Store

ENTRIES_NAMESPACE = "memoryd.entries/"
COUNTER_NAMESPACE = "memoryd.entry-scopes"
MAX_ENTRY_CHARS = 2000
DEFAULT_SCOPE_CAPACITY = 200
DEFAULT_SEARCH_LIMIT = 10
DEFAULT_PAGE = 100
TAG_WEIGHT = 2.0
CONTENT_WEIGHT = 1.0
# Cosine similarity below this adds nothing: unrelated texts still have small positive cosines.
MIN_SEMANTIC = 0.3
CAS_ATTEMPTS = 5
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

    def record(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "text": self.text, "tags": self.tags, "create_time": self.create_time}
        if self.embedding:
            data["embedding"] = self.embedding
            data["model_id"] = self.model_id
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
        )


@dataclass(frozen=True, slots=True)
class SaveResult:
    entry: Entry
    deduplicated: bool
    count: int
    capacity: int


@dataclass(frozen=True, slots=True)
class Hit:
    entry: Entry
    score: float
    keyword_score: float
    semantic_score: float


# -- scoring (pure) ---------------------------------------------------------------
_WORD = re.compile(r"\w+", re.UNICODE)


def _is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return (
        0x3040 <= cp <= 0x30FF  # kana
        or 0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xAC00 <= cp <= 0xD7AF  # hangul
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x2FA1F
    )


def terms(query: str) -> list[str]:
    """Lower-cased words; runs of CJK characters (no spaces between words) become bigrams."""
    out: list[str] = []
    for word in _WORD.findall(query.lower()):
        if len(word) > 2 and all(_is_cjk(ch) for ch in word):
            out.extend(word[i : i + 2] for i in range(len(word) - 1))
        else:
            out.append(word)
    return list(dict.fromkeys(out))


def keyword_score(entry: Entry, query_terms: Sequence[str]) -> float:
    """Per term: TAG_WEIGHT when a tag contains it plus CONTENT_WEIGHT when the text does;
    averaged over the terms."""
    if not query_terms:
        return 0.0
    tags = [t.lower() for t in entry.tags]
    text = entry.text.lower()
    total = 0.0
    for term in query_terms:
        if any(term in tag for tag in tags):
            total += TAG_WEIGHT
        if term in text:
            total += CONTENT_WEIGHT
    return total / len(query_terms)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b) or not a:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def rank(
    entries: Sequence[Entry], query: str, limit: int, query_embedding: Sequence[float] = (), model_id: str = ""
) -> tuple[list[Hit], bool]:
    """Hits best first (ties newest first) and whether the semantic part was used.

    Without a query text or embedding, the newest entries with score 0.
    """
    query_terms = terms(query)
    newest_first = sorted(entries, key=lambda e: (-e.create_time, e.id))
    if not query_terms and not query_embedding:
        return [Hit(e, 0.0, 0.0, 0.0) for e in newest_first[:limit]], False
    hits: list[Hit] = []
    semantic_used = False
    for entry in newest_first:
        keyword = keyword_score(entry, query_terms)
        semantic = 0.0
        if query_embedding and entry.embedding and entry.model_id == model_id and len(entry.embedding) == len(query_embedding):
            semantic_used = True
            similarity = cosine(entry.embedding, query_embedding)
            semantic = similarity if similarity >= MIN_SEMANTIC else 0.0
        score = keyword + semantic
        if score > 0:
            hits.append(Hit(entry, score, keyword, semantic))
    hits.sort(key=lambda h: -h.score)  # stable: equal scores stay newest first
    return hits[:limit], semantic_used


# -- the service --------------------------------------------------------------------
class Embedder(Protocol):
    """The server-side embedder, when one is configured (shared with vector memory)."""

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
    ) -> None:
        self.store = store
        self.limits = limits
        self.capacity = capacity
        self.embedder = embedder
        self.page_tokens = page_tokens or paging.PageTokens.ephemeral()

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

    async def _count(self, tenant: str, scope: str) -> tuple[int, int | None]:
        """(entries in the scope, counter value to guard on; None when the counter is absent)."""
        counter = await self.store.get_metadata(tenant, COUNTER_NAMESPACE, counter_key(scope))
        if counter is not None:
            return int(counter.data["count"]), int(counter.data["count"])
        return len(await self._all(tenant, scope)), None

    async def _get(self, tenant: str, scope: str, id_: str) -> Entry | None:
        record = await self.store.get_metadata(tenant, entries_namespace(scope), id_)
        return Entry.from_record(scope, record.data) if record else None

    async def save(
        self,
        tenant: str,
        scope: str,
        text: str,
        tags: Sequence[str],
        embedding: Sequence[float] = (),
        model_id: str = "",
    ) -> SaveResult:
        """Input was validated: normalized text is 1..MAX_ENTRY_CHARS characters."""
        normalized = normalize(text)
        id_ = entry_id(normalized)
        if not embedding:
            embedding, model_id = await self._embed(normalized)
        for _ in range(CAS_ATTEMPTS):
            existing = await self._get(tenant, scope, id_)
            count, guard_value = await self._count(tenant, scope)
            if existing is not None:
                return SaveResult(existing, True, count, self.capacity)
            if count >= self.capacity:
                raise FailedPrecondition(
                    f"scope {scope!r} holds {count} entries, its maximum; forget or merge entries before saving more",
                    reason="ENTRY_SCOPE_FULL",
                    metadata={"scope": scope, "count": str(count), "capacity": str(self.capacity)},
                )
            entry = Entry(
                id=id_,
                scope=scope,
                text=normalized,
                tags=normalize_tags(tags),
                create_time=now_ms(),
                embedding=[float(x) for x in embedding] or None,
                model_id=model_id if embedding else "",
            )
            written = await self.store.write_metadata_guarded(
                tenant,
                [
                    MetadataWrite(entries_namespace(scope), id_, entry.record()),
                    MetadataWrite(COUNTER_NAMESPACE, counter_key(scope), {"count": count + 1}),
                ],
                MetadataGuard(COUNTER_NAMESPACE, counter_key(scope), "count", guard_value),
                ev.entry_changed(scope, id_, deleted=False),
                entry.create_time,
            )
            if written:
                return SaveResult(entry, False, count + 1, self.capacity)
        raise FailedPrecondition(
            "the scope kept changing under this call; retry", reason="ENTRY_SCOPE_CONTENDED", metadata={"scope": scope}
        )

    async def forget(self, tenant: str, scope: str, id_: str) -> bool:
        for _ in range(CAS_ATTEMPTS):
            if await self._get(tenant, scope, id_) is None:
                return False
            count, guard_value = await self._count(tenant, scope)
            written = await self.store.write_metadata_guarded(
                tenant,
                [
                    MetadataWrite(entries_namespace(scope), id_, None),
                    MetadataWrite(COUNTER_NAMESPACE, counter_key(scope), {"count": max(count - 1, 0)}),
                ],
                MetadataGuard(COUNTER_NAMESPACE, counter_key(scope), "count", guard_value),
                ev.entry_changed(scope, id_, deleted=True),
                now_ms(),
            )
            if written:
                return True
        raise FailedPrecondition(
            "the scope kept changing under this call; retry", reason="ENTRY_SCOPE_CONTENDED", metadata={"scope": scope}
        )

    async def search(
        self, tenant: str, scope: str, query: str, limit: int, query_embedding: Sequence[float] = (), model_id: str = ""
    ) -> tuple[list[Hit], bool]:
        size = min(limit or DEFAULT_SEARCH_LIMIT, self.limits.max_page_size)
        if not query_embedding and query.strip():
            query_embedding, model_id = await self._embed(query)
        return rank(await self._all(tenant, scope), query, size, query_embedding, model_id)

    async def list_entries(
        self, tenant: str, scope: str, page_size: int, page_token: str
    ) -> tuple[list[Entry], str]:
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
