"""LangGraph long-term memory store on memoryd (`pip install 'memoryd-client[langgraph]'`).

    from langgraph.graph import StateGraph
    from memoryd_client import SyncMemoryClient
    from memoryd_client.langgraph import MemorydStore

    store = MemorydStore(SyncMemoryClient("127.0.0.1:50051"))
    store.put(("users", "ann", "memories"), "food", {"text": "Ann likes green tea"})
    store.search(("users", "ann"), query="tea")
    graph = builder.compile(store=store)   # nodes and tools reach it as runtime.store

A `BaseStore` (sync `batch` and async `abatch`, every op): an item is one memoryd metadata
record, namespace ("users", "ann", "memories") -> "langgraph.users.ann.memories" (LangGraph
labels never contain "."), key -> key, data {"value": the item as JSON text (exact: a
Struct would turn 1 into 1.0), "created_at", "entries", "expires_at" (with a TTL)}.

A search with a `query` goes through memoryd's recall of long-term entries (SearchEntries:
BM25 keywords, fused with meaning when the server has an embedder): each item's indexed
text (the store's index `fields`, default the whole value; `put(..., index=[...])` or
`index=False` per item) is saved as entries of a scope named like its namespace, the record
keeps their ids, and a hit ranks every item that references it (an item's score is its
best entry's). docs/INTEGRATIONS.md, "LangGraph", explains the choice and what differs.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

# LangGraph's reference semantics (InMemoryStore): filter values and namespace conditions.
from langgraph.store.memory import _compare_values, _does_match

from memoryd.v1 import metadata_service_pb2

from . import frameworks
from .client import MemoryClient
from .frameworks import Program, every, rpc
from .sync import SyncMemoryClient

DEFAULT_ROOT = "langgraph."
MAX_ENTRY_CHARS = 2000  # EntryService's bound on one entry's text
_SEARCH_ALL = 1000  # hits per scope asked of SearchEntries (the server clamps to its page size)


class MemorydStore(BaseStore):
    """memoryd as a LangGraph `BaseStore`: namespaced JSON items, searched by filter and
    by a natural-language query through memoryd's recall of long-term entries.

    Args:
        client: a SyncMemoryClient (for `batch`: get, put, search, ...) or a MemoryClient
            (for `abatch`: aget, aput, asearch, ...). Without a MemoryClient the async
            methods run the sync ones in a thread.
        async_client: the MemoryClient, when `client` is the sync one and both are used.
        root: the namespace prefix of this store's records ("langgraph." by default). Two
            stores with different roots never see each other's items; a root must end with
            "." and not be a prefix of another store's root.
        index: which fields of a value are searchable by `query` ({"fields": [...]}, JSON
            paths as LangGraph's IndexConfig takes them; default ["$"], the whole value).
            The semantic part of a search is the memoryd server's embedder: `dims` and
            `embed` are not used.
        ttl: LangGraph's TTLConfig; `default_ttl` (minutes) applies to puts without a ttl.
            An item expires `ttl` minutes after its last put (reads do not refresh it).
    """

    supports_ttl = True

    def __init__(
        self,
        client: SyncMemoryClient | MemoryClient | None = None,
        *,
        async_client: MemoryClient | None = None,
        root: str = DEFAULT_ROOT,
        index: dict[str, Any] | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        if isinstance(client, MemoryClient):
            client, async_client = None, client
        if client is None and async_client is None:
            raise TypeError("MemorydStore needs a SyncMemoryClient or a MemoryClient")
        if not root.endswith("."):
            raise ValueError(f"root must end with '.', got {root!r}")
        self.client = client
        self.async_client = async_client
        self.root = root
        self.index_fields: list[str] = list((index or {}).get("fields") or ["$"])
        self.ttl_config = ttl

    # -- BaseStore ------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self.client is None:
            raise TypeError("this store has only a MemoryClient: use the async methods (aget, aput, ...)")
        return frameworks.run(self.client, self._batch(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self.async_client is None:
            return await asyncio.to_thread(self.batch, list(ops))
        return await frameworks.run_async(self.async_client, self._batch(list(ops)))

    # -- one program per op, for both clients ----------------------------------------------
    def _batch(self, ops: list[Op]) -> Program[list[Result]]:
        for op in ops:  # every label checked before anything is read or written
            validate_op_namespace(op)
            if isinstance(op, (GetOp, PutOp)) and not op.namespace:
                raise InvalidNamespaceError("Namespace cannot be empty.")
        results: list[Result] = []
        for op in ops:  # in order: a read after a put in one batch sees it
            if isinstance(op, GetOp):
                results.append((yield from self._get(op)))
            elif isinstance(op, PutOp):
                results.append((yield from self._put(op)))
            elif isinstance(op, SearchOp):
                results.append((yield from self._search(op)))
            elif isinstance(op, ListNamespacesOp):
                results.append((yield from self._list_namespaces(op)))
            else:
                raise ValueError(f"Unknown operation type: {type(op)}")
        return results

    def _get(self, op: GetOp) -> Program[Item | None]:
        record = yield rpc.get_metadata(self._namespace(op.namespace), op.key)
        return self._item(record, Item) if record is not None and not _expired(record) else None

    def _put(self, op: PutOp) -> Program[None]:
        namespace = self._namespace(op.namespace)
        old = yield rpc.get_metadata(namespace, op.key)
        entries: list[str] = []
        if op.value is None:
            if old is not None:
                yield rpc.delete_metadata(namespace, op.key)
        else:
            value = _json(op.value)
            for text in self._texts(op):
                saved = yield rpc.save_entry(namespace, text)
                entries.append(saved.entry.id)
            now = _now_ms()
            data: dict[str, Any] = {
                "value": value,
                "created_at": _number(old, "created_at") if old is not None and not _expired(old) else now,
                "entries": list(dict.fromkeys(entries)),
            }
            if op.ttl is not None:
                data["expires_at"] = now + int(op.ttl * 60_000)
            yield rpc.save_metadata(namespace, op.key, data)
        stale = set(_entries(old)) - set(entries) if old is not None else set()
        if stale:
            yield from self._forget_unreferenced(namespace, op.key, stale)
        return None

    def _forget_unreferenced(self, namespace: str, key: str, stale: set[str]) -> Program[None]:
        """Forgets the entries an item no longer has, unless another item of the namespace has
        the same text (entries are deduplicated by text within a scope: they share one)."""
        records = yield from every("list_metadata", "entries", namespace, page_size=1000)
        for record in records:
            if record.key != key:
                stale -= set(_entries(record))
        for entry_id in sorted(stale):
            yield rpc.forget_entry(namespace, entry_id)

    def _search(self, op: SearchOp) -> Program[list[SearchItem]]:
        if op.query:
            return (yield from self._search_by_query(op))
        found: list[SearchItem] = []
        wanted = op.offset + op.limit
        for listing in self._listings(op.namespace_prefix):
            token = ""
            while len(found) < wanted:
                response = yield rpc.list_metadata(page_token=token, page_size=1000, **listing)
                found += [self._item(r, SearchItem) for r in response.entries if self._matches(r, op.filter)]
                token = response.next_page_token
                if not token:
                    break
        return found[op.offset : wanted]

    def _search_by_query(self, op: SearchOp) -> Program[list[SearchItem]]:
        ranked: list[tuple[float, SearchItem]] = []
        for namespace in (yield from self._namespaces_under(op.namespace_prefix)):
            response = yield rpc.search_entries(namespace, op.query, limit=_SEARCH_ALL)
            scores = {hit.entry.id: hit.score for hit in response.hits}
            if not scores:
                continue
            for record in (yield from every("list_metadata", "entries", namespace, page_size=1000)):
                matched = [scores[e] for e in _entries(record) if e in scores]
                if matched and self._matches(record, op.filter):
                    item = self._item(record, SearchItem)
                    item.score = max(matched)
                    ranked.append((item.score, item))
        ranked.sort(key=lambda pair: (-pair[0], pair[1].namespace, pair[1].key))
        return [item for _, item in ranked[op.offset : op.offset + op.limit]]

    def _list_namespaces(self, op: ListNamespacesOp) -> Program[list[tuple[str, ...]]]:
        # The longest plain (wildcard-free) prefix narrows the server's listing.
        plain: list[str] = []
        for condition in op.match_conditions or ():
            if condition.match_type == "prefix":
                path = list(condition.path)
                plain = path[: path.index("*")] if "*" in path else path
                break
        names = yield from self._namespaces_under(tuple(plain))
        found = [
            labels
            for labels in map(self._labels, names)
            if all(_does_match(c, labels) for c in op.match_conditions or ())
        ]
        if op.max_depth is not None:
            found = list({labels[: op.max_depth] for labels in found})
        return sorted(found)[op.offset : op.offset + op.limit]

    # -- helpers --------------------------------------------------------------------------
    def _namespace(self, labels: Sequence[str]) -> str:
        return self.root + ".".join(labels)

    def _labels(self, namespace: str) -> tuple[str, ...]:
        return tuple(namespace[len(self.root) :].split("."))

    def _listings(self, prefix: tuple[str, ...]) -> list[dict[str, Any]]:
        """ListMetadata arguments covering the namespaces under `prefix` at label boundaries:
        the namespace itself, then its descendants (("a",) must not reach ("ab",))."""
        if not prefix:
            return [{"namespace_prefix": self.root}]
        namespace = self._namespace(prefix)
        return [{"namespace": namespace}, {"namespace_prefix": namespace + "."}]

    def _namespaces_under(self, prefix: tuple[str, ...]) -> Program[list[str]]:
        """The memoryd namespaces holding records under `prefix`, at label boundaries."""
        if not prefix:
            return (yield from every("list_namespaces", "namespaces", self.root, page_size=1000))
        namespace = self._namespace(prefix)
        first = yield rpc.list_namespaces(namespace, page_size=1)  # itself sorts first
        itself = [namespace] if list(first.namespaces[:1]) == [namespace] else []
        return itself + (yield from every("list_namespaces", "namespaces", namespace + ".", page_size=1000))

    def _texts(self, op: PutOp) -> list[str]:
        """The item's searchable texts, as entries: one per indexed field value, in pieces of
        at most MAX_ENTRY_CHARS characters (EntryService's bound)."""
        if op.index is False or op.value is None:
            return []
        texts: list[str] = []
        for path in op.index or self.index_fields:
            for text in get_text_at_path(dict(op.value), path if path == "$" else tokenize_path(path)):
                texts += _pieces(" ".join(text.split()))
        return list(dict.fromkeys(t for t in texts if t))

    def _matches(self, record: metadata_service_pb2.MetadataEntry, filter: dict[str, Any] | None) -> bool:
        if _expired(record):
            return False
        if not filter:
            return True
        value = json.loads(record.data.fields["value"].string_value)
        return all(_compare_values(_field(value, key), wanted) for key, wanted in filter.items())

    def _item(self, record: metadata_service_pb2.MetadataEntry, kind: type[Item]) -> Any:
        return kind(
            namespace=self._labels(record.namespace),
            key=record.key,
            value=json.loads(record.data.fields["value"].string_value),
            created_at=_datetime(_number(record, "created_at")),
            updated_at=_datetime(record.update_time),
        )


def _json(value: Any) -> str:
    try:
        return json.dumps(dict(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise ValueError(f"memoryd keeps LangGraph items as JSON; this value is not JSON-serializable: {error}") from None


def _field(value: dict[str, Any], key: str) -> Any:
    """A filter key's value: a top-level field, else a dotted path into nested objects."""
    if key in value or "." not in key:
        return value.get(key)
    current: Any = value
    for part in key.split("."):
        if not isinstance(current, dict):
            return None
        current = current.get(part)
    return current


def _pieces(text: str) -> list[str]:
    """`text` cut at spaces into pieces of at most MAX_ENTRY_CHARS characters."""
    pieces: list[str] = []
    while len(text) > MAX_ENTRY_CHARS:
        cut = text.rfind(" ", 0, MAX_ENTRY_CHARS + 1)
        cut = cut if cut > 0 else MAX_ENTRY_CHARS
        pieces.append(text[:cut].strip())
        text = text[cut:].strip()
    return [*pieces, text] if text else pieces


def _entries(record: metadata_service_pb2.MetadataEntry | None) -> list[str]:
    if record is None or "entries" not in record.data.fields:
        return []
    return [v.string_value for v in record.data.fields["entries"].list_value.values]


def _number(record: metadata_service_pb2.MetadataEntry, field: str) -> int:
    value = record.data.fields.get(field)
    return int(value.number_value) if value is not None else record.update_time


def _expired(record: metadata_service_pb2.MetadataEntry) -> bool:
    expires = record.data.fields.get("expires_at")
    return expires is not None and expires.number_value <= _now_ms()


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


__all__ = ["DEFAULT_ROOT", "MemorydStore"]
