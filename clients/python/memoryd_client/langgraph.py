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
Struct would turn 1 into 1.0), "created_at", "expires_at" and "ttl" (with a TTL), and what
a query search reads: "vectors" or "indexed"}.

A search with a `query` ranks by meaning, two ways:
- `index={"embed": ..., "dims": ...}` (LangGraph's IndexConfig): the store embeds each
  item's indexed texts (`fields`, default the whole value; `put(..., index=[...])` or
  `index=False` per item) with `embed` and keeps the vectors in the item's record; a search
  embeds the query and ranks every item matching the filter by cosine similarity (an item
  scores its best vector), as LangGraph's own stores do.
- without `embed`: memoryd's recall of long-term entries (SearchEntries: BM25 keywords,
  fused with meaning when the server has an embedder). Each item's indexed text is one
  entry, saved with the item's key (one entry per key, whatever the interleaving of puts),
  in a scope named like its namespace; the record keeps a hash of that text, so a hit
  whose text a later put replaced is never returned. Unlike LangGraph's stores, it returns
  only the items that match: a shared keyword, or (with the server's embedder) a
  similarity at least the server's threshold, not every item of the filter. When the
  server answers without its embedder, the store warns (MemorydSearchWarning, a
  UserWarning, which Python shows by default) that the search was keyword-only, whether
  or not a keyword matched.

Formed memory (docs/MEMORY.md; a server run with --llm-url) reads through the same interface,
under namespaces whose first label is "memoryd" (the `formed` argument; reserved):
- ("memoryd", "facts", user_id): the user's formed facts, one item per fact (key: the fact's
  id; value: text, category, keywords, event_time, sources (provenance: session_id,
  message_id, seq of each message it came from), corrected, valid_to, superseded_by).
  `search` lists the current facts, newest first (`query` ranks them: with `embed` by
  similarity, else by the query's words they share); `get` finds any fact, superseded ones
  too. `put` of a fact's id with a value holding "text" is UpdateFact (a correction that
  extraction never overrides); `delete` is DeleteFact. A put of a key that is no fact, and
  any write to the profile, raises FormedMemoryError: memoryd forms memory from messages.
- ("memoryd", "profile", user_id): one item, key "profile": the profile document (text,
  fact_ids); read-only.
store.facts_namespace(user_id) and store.profile_namespace(user_id) name them; their user
label writes "%" as "%25" and "." as "%2E" (LangGraph labels hold no "."). These
namespaces are not listed by list_namespaces, nor searched from a shorter prefix.
docs/INTEGRATIONS.md, "LangGraph", explains the choice and what differs.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import re
import time
import unicodedata
import warnings
import weakref
from array import array
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from google.protobuf import json_format
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

# LangGraph's reference semantics (InMemoryStore): filter values and namespace conditions.
from langgraph.store.memory import _compare_values, _does_match

from memoryd.v1 import formation_service_pb2, metadata_service_pb2

from . import frameworks
from .client import MemoryClient
from .errors import NotFoundError
from .frameworks import Program, every, rpc
from .sync import SyncMemoryClient

DEFAULT_ROOT = "langgraph."
MAX_ENTRY_CHARS = 2000  # EntryService's bound on one entry's text
_SEARCH_ALL = 1000  # hits per scope asked of SearchEntries (the server clamps to its page size)
# Async batches of one store running at once on one event loop; more wait their turn before
# their first call, so a burst of thousands of aput/aget (LangGraph's test_large_batches_async)
# queues here, where no call's deadline runs, not at the server, where it would.
_IN_FLIGHT = 32


class MemorydSearchWarning(UserWarning):
    """A query search could not be served as asked: it was keyword-only (the memoryd server
    has no embedder and the store no `embed`)."""


class FormedMemoryError(ValueError):
    """A write to formed memory that memoryd does not do: facts are formed from messages (a
    put may only correct an existing fact), and the profile is written from the facts."""


FORMED_ROOT = "memoryd"  # the first label of formed memory's namespaces
PROFILE_KEY = "profile"
_FORMED_KINDS = ("facts", "profile")
# Scripts written without spaces (kana, CJK ideographs, Hangul syllables): their runs count as
# overlapping character pairs; the other letters and digits as words.
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(f"[{_UNSPACED}]+|[^\\W{_UNSPACED}]+")
_EMBEDDED_CACHE = 10_000  # fact texts whose vectors a store keeps (formed-memory searches with embed)


class MemorydStore(BaseStore):
    """memoryd as a LangGraph `BaseStore`: namespaced JSON items, searched by filter and
    by a natural-language query through memoryd's recall of long-term entries.

    Args:
        client: a SyncMemoryClient (for `batch`: get, put, search, ...) or a MemoryClient
            (for `abatch`: aget, aput, asearch, ...). Without a MemoryClient the async
            methods run the sync ones in a thread; without a SyncMemoryClient the sync ones
            run the async ones on a loop of their own, except in a thread whose event loop
            is running (asyncio.InvalidStateError, as LangGraph's async stores).
        async_client: the MemoryClient, when `client` is the sync one and both are used.
        root: the namespace prefix of this store's records ("langgraph." by default). Two
            stores with different roots never see each other's items; a root must end with
            "." and not be a prefix of another store's root.
        index: LangGraph's IndexConfig: `fields` (JSON paths of a value searchable by
            `query`; default ["$"], the whole value), `embed` (an Embeddings, a function of a
            list of texts, sync or async, or "provider:model") and `dims`. With `embed` the
            store embeds and ranks every matching item by similarity; without, a query goes
            to the memoryd server's recall of entries (module docstring).
        ttl: LangGraph's TTLConfig; `default_ttl` (minutes) applies to puts without a ttl.
            An item expires `ttl` minutes after its last put, or its last read when
            `refresh_on_read` (default True; a get or search may also say `refresh_ttl`).
        formed: the first label of formed memory's namespaces ("memoryd": (formed, "facts",
            user_id) and (formed, "profile", user_id), module docstring); None leaves out
            formed memory, and the label is then an ordinary one.
    """

    supports_ttl = True

    def __init__(
        self,
        client: SyncMemoryClient | MemoryClient | None = None,
        *,
        async_client: MemoryClient | None = None,
        root: str = DEFAULT_ROOT,
        index: IndexConfig | dict[str, Any] | None = None,
        ttl: TTLConfig | None = None,
        formed: str | None = FORMED_ROOT,
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
        self.index_config: dict[str, Any] | None = None
        self.embeddings: Any = None
        if index is not None:
            self.index_config = {**index, "fields": list(index.get("fields") or ["$"])}
            if index.get("embed") is not None:
                self.embeddings = ensure_embeddings(index["embed"])
                if not index.get("dims"):
                    raise ValueError("index['dims'] is required with index['embed'] (LangGraph's IndexConfig)")
        self.index_fields: list[str] = list((index or {}).get("fields") or ["$"])
        self.ttl_config = ttl
        self.formed = formed
        self._warned = False
        self._warned_formed = False
        self._fact_vectors: dict[str, list[float]] = {}
        self._windows: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    # -- BaseStore ------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self.client is None:  # a MemoryClient alone: as LangGraph's async stores
            if _loop_running():
                raise asyncio.InvalidStateError(
                    "MemorydStore has only a MemoryClient: in the event loop's thread use the async methods"
                    " (aget, aput, ...); the sync ones work from other threads"
                )
            return asyncio.run(self.abatch(ops))  # the client opens a channel for this loop
        ops = self._checked(ops)
        vectors: dict[str, list[float]] = {}
        if self.embeddings is not None:
            documents, queries = self._to_embed(ops)
            if documents:
                vectors.update(zip(documents, self.embeddings.embed_documents(documents), strict=True))
            for query in queries:
                vectors[query] = self.embeddings.embed_query(query)
        results = frameworks.run(self.client, self._batch(ops, vectors))
        for position, result in enumerate(results):
            if isinstance(result, _Ranking):
                missing = [t for t in dict.fromkeys(result.texts) if t not in self._fact_vectors]
                if missing:
                    self._keep_vectors(missing, self.embeddings.embed_documents(missing))
                results[position] = result.ranked(self._fact_vectors)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self.async_client is None:
            return await asyncio.to_thread(self.batch, list(ops))
        ops = self._checked(ops)
        vectors: dict[str, list[float]] = {}
        if self.embeddings is not None:
            documents, queries = self._to_embed(ops)
            if documents:
                vectors.update(zip(documents, await self.embeddings.aembed_documents(documents), strict=True))
            for query in queries:
                vectors[query] = await self.embeddings.aembed_query(query)
        async with self._window():
            results = await frameworks.run_async(self.async_client, self._batch(ops, vectors))
        for position, result in enumerate(results):
            if isinstance(result, _Ranking):
                missing = [t for t in dict.fromkeys(result.texts) if t not in self._fact_vectors]
                if missing:
                    self._keep_vectors(missing, await self.embeddings.aembed_documents(missing))
                results[position] = result.ranked(self._fact_vectors)
        return results

    def _window(self) -> asyncio.Semaphore:
        """The bound on this store's async batches in flight on the running loop (one per loop:
        a semaphore belongs to the loop it first waits on)."""
        loop = asyncio.get_running_loop()
        window = self._windows.get(loop)
        if window is None:
            window = self._windows[loop] = asyncio.Semaphore(_IN_FLIGHT)
        return window

    def _keep_vectors(self, texts: list[str], vectors: list[list[float]]) -> None:
        if len(self._fact_vectors) + len(texts) > _EMBEDDED_CACHE:
            self._fact_vectors.clear()
        self._fact_vectors.update(zip(texts, vectors, strict=True))

    @staticmethod
    def _checked(ops: Iterable[Op]) -> list[Op]:
        ops = list(ops)
        for op in ops:  # every label checked before anything is read or written
            validate_op_namespace(op)
            if isinstance(op, (GetOp, PutOp)) and not op.namespace:
                raise InvalidNamespaceError("Namespace cannot be empty.")
        return ops

    def _to_embed(self, ops: list[Op]) -> tuple[list[str], list[str]]:
        """(texts of the puts, queries of the searches) that `embed` turns into vectors."""
        documents = [
            text for op in ops if isinstance(op, PutOp) and self._formed_of(op) is None for text in self._texts(op)
        ]
        queries = [op.query for op in ops if isinstance(op, SearchOp) and op.query]
        return list(dict.fromkeys(documents)), list(dict.fromkeys(queries))

    # -- one program per op, for both clients ----------------------------------------------
    def _batch(self, ops: list[Op], vectors: dict[str, list[float]]) -> Program[list[Result]]:
        results: list[Result] = []
        for op in ops:  # in order: a read after a put in one batch sees it
            formed = self._formed_of(op)
            if formed is not None:
                results.append((yield from self._formed_op(op, *formed, vectors)))
            elif isinstance(op, GetOp):
                results.append((yield from self._get(op)))
            elif isinstance(op, PutOp):
                yield from self._put(op, vectors)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append((yield from self._search(op, vectors.get(op.query or ""))))
            elif isinstance(op, ListNamespacesOp):
                results.append((yield from self._list_namespaces(op)))
            else:
                raise ValueError(f"Unknown operation type: {type(op)}")
        return results

    def _get(self, op: GetOp) -> Program[Item | None]:
        record = yield rpc.get_metadata(self._namespace(op.namespace), op.key)
        if record is None or _expired(record):
            return None
        if self._refreshes(op.refresh_ttl):
            record = yield from self._refresh(record)
        return self._item(record, Item)

    def _refreshes(self, asked: bool) -> bool:
        return asked and bool((self.ttl_config or {}).get("refresh_on_read", True))

    def _refresh(self, record: metadata_service_pb2.MetadataEntry) -> Program[metadata_service_pb2.MetadataEntry]:
        """A read of an item with a TTL moves its expiry `ttl` minutes past now (LangGraph's
        refresh_on_read). The record is written back only while it still holds what was read,
        so a put that came in between is kept."""
        ttl = record.data.fields.get("ttl")
        if ttl is None:
            return record
        current = yield rpc.get_metadata(record.namespace, record.key)
        if current is None or _json_of(current) != _json_of(record):
            return current if current is not None and not _expired(current) else record
        data = json_format.MessageToDict(record.data)
        data["expires_at"] = _now_ms() + int(ttl.number_value * 60_000)
        return (yield rpc.save_metadata(record.namespace, record.key, data))

    def _put(self, op: PutOp, vectors: dict[str, list[float]]) -> Program[None]:
        namespace = self._namespace(op.namespace)
        old = yield rpc.get_metadata(namespace, op.key)
        if op.value is None:  # the record first: its entry then stands for no item
            if old is not None:
                yield rpc.delete_metadata(namespace, op.key)
                yield from self._forget_entries(namespace, op.key, old)
            return None
        now = _now_ms()
        data: dict[str, Any] = {
            "value": _json(op.value),
            "created_at": _number(old, "created_at") if old is not None and not _expired(old) else now,
        }
        if op.ttl is not None:
            data["expires_at"] = now + int(op.ttl * 60_000)
            data["ttl"] = op.ttl
        texts = self._texts(op)
        if self.embeddings is not None:
            if texts:
                data["vectors"] = [_pack_vector(vectors[text]) for text in texts]
        elif texts:  # the entry first, then the record that names its text
            text = _pieces(" ".join(texts))[0]
            yield rpc.save_entry(namespace, text, key=op.key)
            data["indexed"] = _digest(text)
        yield rpc.save_metadata(namespace, op.key, data)
        if old is not None and "indexed" not in data and "indexed" in old.data.fields:
            yield rpc.forget_entry(namespace, key=op.key)
        if old is not None and _entries(old):
            yield from self._forget_unreferenced(namespace, op.key, set(_entries(old)))
        return None

    def _forget_entries(self, namespace: str, key: str, old: metadata_service_pb2.MetadataEntry) -> Program[None]:
        if "indexed" in old.data.fields:
            yield rpc.forget_entry(namespace, key=key)
        if _entries(old):
            yield from self._forget_unreferenced(namespace, key, set(_entries(old)))

    def _forget_unreferenced(self, namespace: str, key: str, stale: set[str]) -> Program[None]:
        """Records written by earlier versions name their entries (shared by equal texts):
        forgets those no other item of the namespace names."""
        records = yield from every("list_metadata", "entries", namespace, page_size=1000)
        for record in records:
            if record.key != key:
                stale -= set(_entries(record))
        for entry_id in sorted(stale):
            yield rpc.forget_entry(namespace, entry_id)

    def _search(self, op: SearchOp, query_vector: list[float] | None) -> Program[list[SearchItem]]:
        page: list[_Found]
        if op.query and self.embeddings is not None:
            ranked = _by_similarity((yield from self._filtered(op, None)), query_vector or [])
            page = ranked[op.offset : op.offset + op.limit]
        elif op.query:
            page = yield from self._search_by_query(op)
        else:
            page = [found for found, _ in (yield from self._filtered(op, op.offset + op.limit))][op.offset :]
        if self._refreshes(op.refresh_ttl):
            for found in page:
                yield from self._refresh(found.record)
        return [found.item for found in page]

    def _filtered(self, op: SearchOp, wanted: int | None) -> Program[list[tuple[_Found, list[list[float]]]]]:
        """The items under the prefix that match the filter, with their vectors: the first
        `wanted` (None: all)."""
        found: list[tuple[_Found, list[list[float]]]] = []
        for listing in self._listings(op.namespace_prefix):
            token = ""
            while wanted is None or len(found) < wanted:
                response = yield rpc.list_metadata(page_token=token, page_size=1000, **listing)
                for record in response.entries:
                    if self._matches(record, op.filter):
                        vectors = [_unpack_vector(v.string_value) for v in _list(record, "vectors")]
                        found.append((_Found(record, self._item(record, SearchItem)), vectors))
                token = response.next_page_token
                if not token:
                    break
        return found if wanted is None else found[:wanted]

    def _search_by_query(self, op: SearchOp) -> Program[list[_Found]]:
        ranked: list[tuple[float, _Found]] = []
        for namespace in (yield from self._namespaces_under(op.namespace_prefix)):
            response = yield rpc.search_entries(namespace, op.query, limit=_SEARCH_ALL)
            # Also with no hits: an empty answer of a keyword-only search is no "nothing similar".
            if not response.semantic and not self._warned:
                self._warned = True
                warnings.warn(
                    "memoryd: a query search was keyword-only (the memoryd server has no embedder);"
                    " give the store index['embed'] to rank by meaning",
                    MemorydSearchWarning,
                    stacklevel=2,
                )
            by_key = {hit.entry.key: hit for hit in response.hits if hit.entry.key}
            by_id = {hit.entry.id: hit.score for hit in response.hits}
            if not by_id:
                continue
            for record in (yield from every("list_metadata", "entries", namespace, page_size=1000)):
                hit = by_key.get(record.key)
                score: float | None = None
                # A hit counts only while the item still holds the text it was found by.
                if hit is not None and _string(record, "indexed") == _digest(hit.entry.text):
                    score = hit.score
                elif matched := [by_id[e] for e in _entries(record) if e in by_id]:
                    score = max(matched)
                if score is not None and self._matches(record, op.filter):
                    item = self._item(record, SearchItem)
                    item.score = score
                    ranked.append((score, _Found(record, item)))
        ranked.sort(key=lambda pair: (-pair[0], pair[1].item.namespace, pair[1].item.key))
        return [found for _, found in ranked[op.offset : op.offset + op.limit]]

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

    # -- formed memory: (formed, "facts" | "profile", user) ---------------------------------
    def facts_namespace(self, user_id: str) -> tuple[str, str, str]:
        """The namespace of the facts memoryd formed about `user_id` (search, get, put, delete)."""
        return self._formed_namespace("facts", user_id)

    def profile_namespace(self, user_id: str) -> tuple[str, str, str]:
        """The namespace of `user_id`'s formed profile: one item, key "profile"."""
        return self._formed_namespace("profile", user_id)

    def _formed_namespace(self, kind: str, user_id: str) -> tuple[str, str, str]:
        if self.formed is None:
            raise ValueError("this store was made with formed=None: it does not read formed memory")
        return self.formed, kind, user_label(user_id)

    def _formed_of(self, op: Op) -> tuple[str, str] | None:
        """(kind, user id) when `op` addresses formed memory; None otherwise."""
        if self.formed is None or isinstance(op, ListNamespacesOp):
            return None
        labels = op.namespace_prefix if isinstance(op, SearchOp) else op.namespace
        if not labels or labels[0] != self.formed:
            return None
        if len(labels) != 3 or labels[1] not in _FORMED_KINDS:
            raise InvalidNamespaceError(
                f"{labels}: formed memory's namespaces are ({self.formed!r}, 'facts', user_id) and"
                f" ({self.formed!r}, 'profile', user_id); the label {self.formed!r} is reserved for them"
            )
        return labels[1], unquote(labels[2])

    def _formed_op(self, op: Op, kind: str, user: str, vectors: dict[str, list[float]]) -> Program[Any]:
        labels = (self.formed or "", kind, user_label(user))
        if isinstance(op, GetOp):
            if kind == "profile":
                profile = yield rpc.get_profile(user)
                return _profile_item(labels, profile, Item) if profile is not None and op.key == PROFILE_KEY else None
            for fact in (yield from every("list_facts", "facts", user, include_superseded=True, page_size=1000)):
                if fact.id == op.key:
                    return _fact_item(labels, fact, Item)
            return None
        if isinstance(op, PutOp):
            yield from self._formed_put(op, kind, user)
            return None
        assert isinstance(op, SearchOp)
        candidates: list[tuple[SearchItem, str]]
        if kind == "profile":
            profile = yield rpc.get_profile(user)
            candidates = [] if profile is None else [(_profile_item(labels, profile, SearchItem), profile.text)]
        else:
            facts = yield from every("list_facts", "facts", user, page_size=1000)
            candidates = [(_fact_item(labels, f, SearchItem), " ".join([f.text, *f.keywords])) for f in facts]
        candidates = [(item, text) for item, text in candidates if _filter_matches(item.value, op.filter)]
        if not op.query:
            return [item for item, _ in candidates[op.offset : op.offset + op.limit]]
        if self.embeddings is not None:
            return _Ranking(candidates, vectors.get(op.query, []), op.offset, op.limit)
        if not self._warned_formed:
            self._warned_formed = True
            warnings.warn(
                "memoryd: a query search of formed memory ranks by the words shared with the query;"
                " give the store index['embed'] to rank by meaning",
                MemorydSearchWarning,
                stacklevel=2,
            )
        return _by_words(candidates, op.query)[op.offset : op.offset + op.limit]

    def _formed_put(self, op: PutOp, kind: str, user: str) -> Program[None]:
        if kind == "profile":
            raise FormedMemoryError(
                "memoryd writes a user's profile from the user's facts; it cannot be put or deleted"
                " (correct or delete facts under (formed, 'facts', user_id) instead)"
            )
        if op.value is None:  # DeleteFact; deleting what is not there is no error, as in LangGraph
            yield rpc.delete_fact(user, op.key)
            return None
        value = dict(op.value)
        text = value.get("text")
        if not isinstance(text, str) or not text.strip():
            raise FormedMemoryError("a put of a formed fact corrects it: its value needs the fact's 'text'")
        keywords = value.get("keywords") or []
        if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            raise FormedMemoryError("a formed fact's 'keywords' is a list of strings")
        try:
            yield rpc.update_fact(
                user,
                op.key,
                text,
                category=str(value.get("category") or ""),
                keywords=keywords,
                event_time=int(value.get("event_time") or 0),
            )
        except NotFoundError:
            raise FormedMemoryError(
                f"user {user!r} has no formed fact {op.key!r}: memoryd forms facts from conversations;"
                " a put under (formed, 'facts', user_id) corrects one of them (keep your own memories"
                " in a namespace of your own)"
            ) from None
        return None

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


def user_label(user_id: str) -> str:
    """The namespace label of a user id in formed memory's namespaces: "%" as "%25" and "."
    as "%2E" (a LangGraph label holds no "."); other ids are their own label."""
    return user_id.replace("%", "%25").replace(".", "%2E")


def _fact_item(labels: tuple[str, ...], fact: formation_service_pb2.Fact, kind: type[Item]) -> Any:
    value = {
        "text": fact.text,
        "category": fact.category,
        "keywords": list(fact.keywords),
        "event_time": fact.event_time,
        "sources": [{"session_id": s.session_id, "message_id": s.message_id, "seq": s.seq} for s in fact.sources],
        "corrected": fact.corrected,
        "valid_to": fact.valid_to,
        "superseded_by": fact.superseded_by,
    }
    return kind(
        namespace=labels,
        key=fact.id,
        value=value,
        created_at=_datetime(fact.create_time),
        updated_at=_datetime(fact.update_time),
    )


def _profile_item(labels: tuple[str, ...], profile: formation_service_pb2.UserProfile, kind: type[Item]) -> Any:
    return kind(
        namespace=labels,
        key=PROFILE_KEY,
        value={"text": profile.text, "fact_ids": list(profile.fact_ids)},
        created_at=_datetime(profile.update_time),
        updated_at=_datetime(profile.update_time),
    )


def _filter_matches(value: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    return all(_compare_values(_field(value, key), wanted) for key, wanted in (filter or {}).items())


def _words(text: str) -> set[str]:
    """The words of `text` (NFKC, case-folded); a run of an unspaced script gives its
    character pairs (a lone character itself), so "東京に住んでいる" shares "東京" with "東京"."""
    words: set[str] = set()
    for run in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if re.match(f"[{_UNSPACED}]", run):
            words.update([run] if len(run) == 1 else (run[i : i + 2] for i in range(len(run) - 1)))
        else:
            words.add(run)
    return words


def _by_words(candidates: list[tuple[SearchItem, str]], query: str) -> list[SearchItem]:
    """The candidates sharing a word with `query`, by the share of the query's words they hold
    (ties keep their order: newest first)."""
    asked = _words(query)
    scored: list[tuple[float, int, SearchItem]] = []
    for position, (item, text) in enumerate(candidates):
        shared = len(asked & _words(text))
        if shared:
            item.score = shared / len(asked)
            scored.append((item.score, position, item))
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return [item for _, _, item in scored]


class _Ranking:
    """A formed-memory search with `embed`: its candidates, ranked once `batch` has embedded
    their texts (the embedder is sync or async, outside the calls' program)."""

    def __init__(self, candidates: list[tuple[SearchItem, str]], query: list[float], offset: int, limit: int) -> None:
        self.candidates = candidates
        self.texts = [text for _, text in candidates]
        self.query = query
        self.offset = offset
        self.limit = limit

    def ranked(self, vectors: dict[str, list[float]]) -> list[SearchItem]:
        found = [(_Found(_NO_RECORD, item), [vectors[text]]) for item, text in self.candidates]
        return [f.item for f in _by_similarity(found, self.query)][self.offset : self.offset + self.limit]


_NO_RECORD = metadata_service_pb2.MetadataEntry()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _Found:
    """A search result and the record it came from (a TTL refresh writes the record back)."""

    __slots__ = ("item", "record")

    def __init__(self, record: metadata_service_pb2.MetadataEntry, item: SearchItem) -> None:
        self.record = record
        self.item = item


def _by_similarity(found: list[tuple[_Found, list[list[float]]]], query: list[float]) -> list[_Found]:
    """LangGraph's ranking (InMemoryStore's): every item by its best cosine similarity to the
    query, best first; items without vectors (put with index=False) after them, unscored."""
    scored: list[tuple[float, int, _Found]] = []
    unscored: list[_Found] = []
    for position, (found_item, vectors) in enumerate(found):
        if vectors:
            score = max(_cosine(query, vector) for vector in vectors)
            found_item.item.score = score
            scored.append((score, position, found_item))
        else:
            unscored.append(found_item)
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    return [found_item for _, _, found_item in scored] + unscored


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b) or not a:
        return 0.0
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def _pack_vector(vector: Sequence[float]) -> str:
    """A vector as base64 of float32s (a quarter of its size as JSON numbers)."""
    return base64.b64encode(array("f", (float(x) for x in vector)).tobytes()).decode("ascii")


def _unpack_vector(text: str) -> list[float]:
    return array("f", base64.b64decode(text)).tolist()


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def _list(record: metadata_service_pb2.MetadataEntry, field: str) -> list[Any]:
    value = record.data.fields.get(field)
    return list(value.list_value.values) if value is not None else []


def _string(record: metadata_service_pb2.MetadataEntry, field: str) -> str:
    value = record.data.fields.get(field)
    return value.string_value if value is not None else ""


def _json_of(record: metadata_service_pb2.MetadataEntry) -> str:
    return json.dumps(json_format.MessageToDict(record.data), sort_keys=True)


def _json(value: Any) -> str:
    try:
        return json.dumps(dict(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"memoryd keeps LangGraph items as JSON; this value is not JSON-serializable: {error}"
        ) from None


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


__all__ = ["DEFAULT_ROOT", "FORMED_ROOT", "FormedMemoryError", "MemorydSearchWarning", "MemorydStore", "user_label"]
