"""Qdrant Edge shards as memoryd keeps them, shared by the server process (edge.py) and the
index builder process (edge_build.py): shard configuration, payload indexes, filters,
and the operation log that carries writes from the serving shard to its standby.

Every call here blocks (and, in qdrant-edge-py 0.9.0, holds the GIL): callers run them
in threads (edge.py) or in the builder process.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import struct
import zlib
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import qdrant_edge as qe

from memoryd.domain import keywords
from memoryd.domain.vectors import text_hash
from memoryd.storage.qdrant import points as p
from memoryd.storage.qdrant.base import KeywordRow, Row

# Segments holding more than this many KB of vectors get an HNSW index when the builder
# optimizes a shard; smaller ones are scanned exactly (about 1 ms per 8 MB on this class
# of machine, 384 dims: ~5,000 points).
INDEXING_THRESHOLD_KB = 8_000
# The optimizer merges segments when a shard has more than this many (each keeps its own
# graph; few large merges instead of re-indexing big segments often).
SEGMENT_NUMBER = 8


# -- shards ---------------------------------------------------------------------------
def shard_config(space: int, build_threads: int, indexing_threshold_kb: int = INDEXING_THRESHOLD_KB) -> qe.EdgeConfig:
    """A dense shard of `space` dimensions, or (KEYWORD_SPACE) the keyword shard: only the
    BM25 sparse vector, with the IDF modifier."""
    if space == p.KEYWORD_SPACE:
        dense, sparse = None, {p.KEYWORD_VECTOR: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
    else:
        dense, sparse = qe.EdgeVectorParams(size=space, distance=qe.Distance.Cosine), None
    return qe.EdgeConfig(
        vectors=dense,
        sparse_vectors=sparse,
        hnsw_config=qe.HnswIndexConfig(
            m=p.HNSW_M,
            ef_construct=p.HNSW_EF_CONSTRUCT,
            full_scan_threshold=p.FULL_SCAN_THRESHOLD_KB,
            max_indexing_threads=build_threads,
            payload_m=p.HNSW_PAYLOAD_M,
        ),
        optimizers=qe.EdgeOptimizersConfig(
            indexing_threshold=indexing_threshold_kb, default_segment_number=SEGMENT_NUMBER
        ),
        wal_enabled=True,
    )


def create_shard(path: Path, space: int, build_threads: int, indexing_threshold_kb: int) -> qe.EdgeShard:
    shard = qe.EdgeShard.create(str(path), shard_config(space, build_threads, indexing_threshold_kb))
    ensure_indexes(shard, space)
    return shard


def load_shard(path: Path, space: int) -> tuple[qe.EdgeShard, bool]:
    """The shard, and whether ensure_indexes rewrote its points (it then needs an index build)."""
    shard = qe.EdgeShard.load(str(path))
    return shard, ensure_indexes(shard, space)


def ensure_indexes(shard: qe.EdgeShard, space: int) -> bool:
    """The space's payload indexes (points.indexed_fields), created when missing and dropped
    when no longer wanted (a shard written by an earlier release): idempotent. True when it
    gave the points of such a shard their TENANT_MODEL_FIELD."""
    present = set(shard.info().payload_schema)
    wanted = p.indexed_fields(space)
    for key in sorted(present - wanted):
        shard.update(qe.UpdateOperation.delete_field_index(key))
    # The tenant-and-model index comes last: once it exists, every point has the field.
    missing = sorted(wanted - present, key=lambda key: key == p.TENANT_MODEL_FIELD)
    rewritten = False
    for key in missing:
        if key == p.TENANT_MODEL_FIELD:
            rewritten = _backfill_tenant_model(shard)
        params = (
            qe.KeywordIndexParams(is_tenant=True) if key == p.TENANT_FIELD else qe.KeywordIndexParams(enable_hnsw=False)
        )
        shard.update(qe.UpdateOperation.create_field_index(key, params))
    return rewritten


def _backfill_tenant_model(shard: qe.EdgeShard) -> bool:
    """points.tenant_model_backfill on this shard. Changing the points' payload voids the
    tenants' graph links: searches scan exactly until the shard is indexed again (edge.py
    then builds the pair)."""
    steps = p.tenant_model_backfill()
    answer: Any = None  # what the step asked for: a count, facet values, or nothing
    while True:
        try:
            step = steps.send(answer)
        except StopIteration as done:
            return done.value
        match step:
            case p.Count(flt):
                answer = shard.count(qe.CountRequest(exact=True, filter=to_filter(flt)))
            case p.Facet(key, flt):
                response = shard.facet(qe.FacetRequest(key, limit=p.FACET_LIMIT, exact=True, filter=to_filter(flt)))
                answer = [str(hit.value) for hit in response.hits]
            case p.SetPayloadWhere(flt, payload):
                shard.update(qe.UpdateOperation.set_payload_by_filter(to_filter(flt), payload))
                answer = None


def copy_points(source: qe.EdgeShard, target: qe.EdgeShard, batch: int = 256) -> int:
    """Every point of `source` (id, vectors, payload) into `target`; returns how many. What an
    erasure rebuild (edge_build.py, purge) writes: only the live points, so none of the
    files of `target` holds a deleted point's payload or an old version of one."""
    copied, offset = 0, None
    while True:
        request = qe.ScrollRequest(offset=offset, limit=batch, filter=None, with_payload=True, with_vector=True)
        records, offset = source.scroll(request)
        if records:
            points = [qe.Point(r.id, cast(Any, r.vector), r.payload or {}) for r in records]  # scrolled with_vector
            target.update(qe.UpdateOperation.upsert_points(points))
            copied += len(records)
        if offset is None:
            return copied


def unindexed(shard: qe.EdgeShard) -> int:
    """Points outside HNSW-indexed segments (what a search scans exactly)."""
    info = shard.info()
    return max(0, info.points_count - info.indexed_vectors_count)


# -- filters --------------------------------------------------------------------------
def to_filter(cond: p.All) -> qe.Filter:
    return qe.Filter(
        must=[_condition(c) for c in cond.must] or None,
        should=[_condition(c) for c in cond.should] or None,
        must_not=[_condition(c) for c in cond.must_not] or None,
    )


def _condition(cond: p.Cond) -> Any:
    match cond:
        case p.Match(key, value):
            return qe.FieldCondition(key, match=qe.MatchValue(value))
        case p.AnyOf(key, values):
            return qe.FieldCondition(key, match=qe.MatchAny(cast(list[str] | list[int], list(values))))
        case p.Below(key, lt):
            return qe.FieldCondition(key, range=qe.RangeFloat(lt=lt))
        case p.HasId(ids):
            return qe.HasIdCondition(set(ids))
        case p.Missing(key):
            return qe.IsEmptyCondition(key)
        case p.All():
            return to_filter(cond)
    raise TypeError(f"unknown condition {cond!r}")


# -- writes ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Upsert:
    # Dense vectors as float32 bytes; sparse ones as (uint32 indices, float32 values) bytes.
    rows: tuple[tuple[str, bytes | tuple[bytes, bytes], dict[str, Any]], ...]

    @classmethod
    def of(cls, rows: Sequence[Row]) -> Upsert:
        return cls(tuple((i, _encode(v), payload) for i, v, payload in rows))


def _encode(vector: Sequence[float] | keywords.Sparse) -> bytes | tuple[bytes, bytes]:
    if isinstance(vector, keywords.Sparse):
        return array("I", vector.indices).tobytes(), array("f", vector.values).tobytes()
    return _floats(len(vector)).pack(*vector)


@functools.lru_cache(maxsize=64)
def _floats(count: int) -> struct.Struct:
    """`count` native float32s: the bytes array("f") reads back, packed in half its time."""
    return struct.Struct(f"={count}f")


def _decode(raw: bytes | tuple[bytes, bytes]) -> list[float] | keywords.Sparse:
    if isinstance(raw, tuple):
        indices, values = array("I"), array("f")
        indices.frombytes(raw[0])
        values.frombytes(raw[1])
        return keywords.Sparse(indices.tolist(), values.tolist())
    vector = array("f")
    vector.frombytes(raw)
    return vector.tolist()


def to_vector(vector: Sequence[float] | keywords.Sparse) -> Any:
    """A point's vector as Edge takes it: the default dense vector, or the named sparse one."""
    if isinstance(vector, keywords.Sparse):
        return {p.KEYWORD_VECTOR: qe.SparseVector(vector.indices, vector.values)}
    return vector


@dataclass(frozen=True, slots=True)
class Delete:
    filter: p.All


@dataclass(frozen=True, slots=True)
class SetPayload:
    """Set these payload fields of those of the points that exist (by filter: a replay may
    meet points a later logged write deleted, which a write by id would refuse)."""

    ids: tuple[str, ...]
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DeletePayload:
    ids: tuple[str, ...]
    keys: tuple[str, ...]


Op = Upsert | Delete | SetPayload | DeletePayload


def apply(shard: qe.EdgeShard, op: Op, rows: Sequence[Row] | None = None) -> None:
    """Apply a logged write; `rows`: the upsert's points as given (skips decoding the log's copy)."""
    match op:
        case Upsert():
            if rows is None:  # (a dense point logged before TENANT_MODEL_FIELD existed lacks it)
                rows = [
                    (point_id, _decode(raw), payload if isinstance(raw, tuple) else p.with_tenant_model(payload))
                    for point_id, raw, payload in op.rows
                ]
            shard.update(
                qe.UpdateOperation.upsert_points([qe.Point(i, to_vector(v), payload) for i, v, payload in rows])
            )
        case Delete():
            shard.update(qe.UpdateOperation.delete_points_by_filter(to_filter(op.filter)))
        case SetPayload():
            shard.update(qe.UpdateOperation.set_payload_by_filter(_ids_filter(op.ids), op.payload))
        case DeletePayload():
            shard.update(qe.UpdateOperation.delete_payload_by_filter(_ids_filter(op.ids), list(op.keys)))


def _ids_filter(ids: Sequence[str]) -> qe.Filter:
    return qe.Filter(must=[qe.HasIdCondition(set(ids))])


def keyword_writes(rows: Sequence[KeywordRow], stored: dict[str, dict[str, Any]]) -> tuple[list[Row], list[Op]]:
    """What upserting keyword points writes, given the stored payloads of those that exist:
    a point that is new or whose text changed (`same_text`) is upserted with its text's BM25
    vector; one whose text is the same keeps its vector and gets only the payload fields that changed,
    set and deleted, one operation per distinct change. Either way each point ends up with
    exactly its row's payload (as an upsert leaves it), in a fraction of an upsert's cost
    (docs/PERFORMANCE.md, run U). Returns the upserted rows and the operations, in order."""
    latest = {row[0]: row for row in rows}  # one per point: the last, as an upsert keeps it
    upserts: list[Row] = []
    sets: dict[tuple, list[str]] = {}
    deletes: dict[tuple[str, ...], list[str]] = {}
    for point_id, text, payload in latest.values():
        old = stored.get(point_id)
        if old is None or not same_text(old, text, payload):
            upserts.append((point_id, keywords.document_vector(text), payload))
            continue
        changed = tuple(sorted((k, _frozen(v)) for k, v in payload.items() if old.get(k) != v))
        if changed:
            sets.setdefault(changed, []).append(point_id)
        gone = tuple(sorted(k for k in old if k not in payload))
        if gone:
            deletes.setdefault(gone, []).append(point_id)
    ops: list[Op] = [Upsert.of(upserts)] if upserts else []
    ops += [SetPayload(tuple(ids), {k: _thawed(v) for k, v in changed}) for changed, ids in sets.items()]
    ops += [DeletePayload(tuple(ids), gone) for gone, ids in deletes.items()]
    return upserts, ops


def same_text(stored: dict[str, Any], text: str, payload: dict[str, Any]) -> bool:
    """Whether a stored keyword point's BM25 vector is `text`'s: by the hash a message's point
    carries (points.TEXT_HASH_FIELD), else by the text a caller's point (or a message's point
    written before hashes) carries."""
    if p.TEXT_HASH_FIELD in stored:
        new_hash = payload.get(p.TEXT_HASH_FIELD)
        return stored[p.TEXT_HASH_FIELD] == (new_hash if new_hash is not None else text_hash(text))
    old = stored.get(p.TEXT_FIELD)
    if old is None:
        return False
    return old == text


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value  # mentioned_ids, to group by


def _thawed(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# -- operation log --------------------------------------------------------------------
_FRAME = struct.Struct("<QII")  # seq, length, crc32


class OpLog:
    """Append-only file of (seq, op) frames: every write of the serving shard, written
    before the shard applies it, so the standby can replay them. A torn last frame (a
    crash mid-append) ends the log. Not fsynced: like the shard's own WAL it survives a
    crash of memoryd, not of the machine."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def append(self, seq: int, op: Op) -> None:
        body = pickle.dumps(op, protocol=pickle.HIGHEST_PROTOCOL)
        os.write(self._fd, _FRAME.pack(seq, len(body), zlib.crc32(body)) + body)

    def reset(self) -> None:
        """Drop every entry (the caller made both shards hold them all)."""
        os.ftruncate(self._fd, 0)

    def close(self) -> None:
        os.close(self._fd)


def read_ops(path: Path, after: int, *, limit_bytes: int | None = None) -> Iterator[tuple[int, Op]]:
    """Entries with seq > after, in order, up to the first torn frame."""
    if not path.exists():
        return
    with open(path, "rb") as handle:
        read = 0
        while limit_bytes is None or read < limit_bytes:
            header = handle.read(_FRAME.size)
            if len(header) < _FRAME.size:
                return
            seq, length, crc = _FRAME.unpack(header)
            body = handle.read(length)
            if len(body) < length or zlib.crc32(body) != crc:
                return
            read += _FRAME.size + length
            if seq > after:
                yield seq, pickle.loads(body)  # our own file, written by OpLog.append


# -- pair state -----------------------------------------------------------------------
STATE_FILE = "state.json"
OPLOG_FILE = "oplog"
SHARD_NAMES = ("a", "b")


@dataclass(slots=True)
class PairState:
    """Which shard serves; `serving_seq` / `standby_seq`: every op up to it is in that shard;
    `reindex`: the serving shard's points were rewritten (ensure_indexes) and need an index
    build, which clears it; `purge`: erasure rebuilds still owed after a delete (edge.py:
    2, one per shard, each rewriting the standby from its live points only)."""

    serving: str = "a"
    serving_seq: int = 0
    standby_seq: int = 0
    reindex: bool = False
    purge: int = 0

    @property
    def standby(self) -> str:
        return SHARD_NAMES[1 - SHARD_NAMES.index(self.serving)]

    @classmethod
    def load(cls, folder: Path) -> PairState | None:
        try:
            data = json.loads((folder / STATE_FILE).read_text())
        except FileNotFoundError:
            return None
        return cls(
            data["serving"],
            int(data["serving_seq"]),
            int(data["standby_seq"]),
            bool(data.get("reindex")),
            int(data.get("purge", 0)),
        )

    def save(self, folder: Path) -> None:
        """Atomically (write, fsync, rename): a crash leaves the old or the new state."""
        tmp = folder / (STATE_FILE + ".tmp")
        with open(tmp, "w") as handle:
            json.dump(
                {
                    "serving": self.serving,
                    "serving_seq": self.serving_seq,
                    "standby_seq": self.standby_seq,
                    "reindex": self.reindex,
                    "purge": self.purge,
                },
                handle,
            )
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, folder / STATE_FILE)
