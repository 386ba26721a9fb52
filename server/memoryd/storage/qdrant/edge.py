"""VectorIndex on Qdrant Edge (qdrant-edge-py): the Qdrant engine in-process, the embedded
default, under `<data-dir>/vectors`. Layout and the reasons for it: docs/VECTORS.md.

- One shard *pair* per dimension (`<prefix>_d<dim>/a`, `/b`) and one for the keyword index
  (`<prefix>_keywords`, BM25 sparse vectors): the serving shard answers
  every call; the standby is the same data, brought up to date and indexed (HNSW) by the
  builder process (edge_build.py) and then swapped in. Qdrant Edge's optimize() blocks and
  holds the GIL for its whole run, so it never runs in the server process.
- Writes go, in one order, to the operation log (edge_engine.OpLog) and then to the
  serving shard, whose WAL makes them durable once the call returns.
- Every Edge call runs in a small thread pool, bounded by the caller's deadline; any
  failure is StorageUnavailable, as on the server adapter. Calls that are still queued
  when their deadline passes never run.
- One process owns the folder (a lock file; Edge itself also locks each shard's WAL). A
  second process on the same data dir sees an unavailable vector store and takes the
  folder over once it is free.
- Edge writes through memory maps of sparse files: on a full disk a page it cannot get
  kills the process (SIGBUS), however small the write. So writes, new shards and index
  builds need `min_free_mb` free on the folder's disk; below it writes answer StorageFull
  and ping fails (health NOT_SERVING), and a folder not yet open stays closed until there is
  room again (loading a shard may write): every call answers StorageFull meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar, cast
from uuid import UUID

import portalocker
import qdrant_edge as qe

from memoryd import shutdown
from memoryd.domain import deadline, keywords
from memoryd.domain.errors import StorageFull, StorageUnavailable
from memoryd.storage.qdrant import edge_engine as engine
from memoryd.storage.qdrant import points as p
from memoryd.storage.qdrant.base import Found, QdrantIndexBase, Search, no_space

log = logging.getLogger(__name__)

T = TypeVar("T")

LOCK_FILE = ".lock"
# Start a rebuild once the serving shard holds this many KB of vectors outside HNSW
# segments (searched exactly: ~2 ms per 16 MB; 384 dims: ~10,000 points).
REBUILD_THRESHOLD_KB = 16_384
# ... or once the operation log holds this many times as much (rewrites of the same points
# grow the log, not the shard; a build empties it). Also bounds what a start after a crash replays.
REBUILD_LOG_FACTOR = 16
MAINTENANCE_SECONDS = 2.0
# Erasure: a pair whose points were deleted is rewritten from its live points (both shards,
# one build each: edge_build.py, purge) starting this long after the first such delete, so
# that the deletes of one ForgetUser or retention sweep share one rewrite (docs/OPERATIONS.md).
ERASE_SECONDS = 60.0
FLUSH_SECONDS = 10.0
BUILD_RETRY_SECONDS = 30.0
LOCK_RETRY_SECONDS = 5.0
# Free space the folder's disk must keep for writes and index builds (a build writes a
# shard's copy), and what a new shard pair takes on top when it is created (two shards with
# their segments and payload indexes: 64 MB for the keyword pair, 84 MB for 16 dimensions, on tmpfs).
MIN_FREE_MB = 128
NEW_PAIR_MB = 96
MIB = 1024 * 1024


def _unavailable(text: str) -> StorageUnavailable:
    return StorageUnavailable(text, reason="VECTOR_STORE_UNAVAILABLE")


def free_bytes(path: Path) -> int:
    """Space an unprivileged writer may still use on the disk under `path` (or its nearest
    existing parent)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


class _Handle:
    """An open shard and the calls using it; closed once retired and idle."""

    def __init__(self, shard: qe.EdgeShard) -> None:
        self.shard = shard
        self._users = 0
        self._retired = False
        self._lock = threading.Lock()

    def acquire(self) -> None:
        with self._lock:
            if self._retired:
                raise _unavailable("vector shard was swapped out")
            self._users += 1

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            close = self._retired and self._users == 0
        if close:
            self.shard.close()

    def retire(self) -> None:
        with self._lock:
            self._retired = True
            close = self._users == 0
        if close:
            self.shard.close()


class _Pair:
    """The serving and standby shards of one space (a dimension, or the keyword index), their
    state and operation log."""

    def __init__(self, folder: Path, space: int, state: engine.PairState, serving: qe.EdgeShard, seq: int) -> None:
        self.folder = folder
        self.space = space
        self.state = state
        self.serving = _Handle(serving)
        self.seq = seq
        self.oplog = engine.OpLog(folder / engine.OPLOG_FILE)
        self.thread_lock = threading.Lock()  # one write (log + shard) at a time, in log order
        self.write_lock = asyncio.Lock()  # writers wait here, not in the thread pool
        self.dirty = False
        self.last_flush = time.monotonic()
        self.build: asyncio.Task | None = None
        self.builder: asyncio.subprocess.Process | None = None
        self.next_build = 0.0
        # Erasure (state.purge): when the first delete not yet in a started purge build was
        # logged (None: none since, or none since this process opened the pair), and a count
        # of such deletes, which tells a purge build whether deletes came during it.
        self.erase_since: float | None = None
        self.erase_count = 0

    @classmethod
    def open(cls, folder: Path, space: int, build_threads: int, indexing_threshold_kb: int) -> _Pair:
        """Load (or create) the pair; replay logged writes the serving shard may lack after a crash."""
        folder.mkdir(parents=True, exist_ok=True)
        state = engine.PairState.load(folder)
        if state is None:
            for name in engine.SHARD_NAMES:
                shutil.rmtree(folder / name, ignore_errors=True)
                engine.create_shard(folder / name, space, build_threads, indexing_threshold_kb).close()
            state = engine.PairState()
            state.save(folder)
        serving, rewritten = engine.load_shard(folder / state.serving, space)
        if rewritten:
            state.reindex = True
            state.save(folder)
            log.info("vector shard %s: points given their tenant_model key; an index build follows", folder.name)
        seq, replayed = max(state.serving_seq, state.standby_seq), 0
        for entry_seq, op in engine.read_ops(folder / engine.OPLOG_FILE, state.serving_seq):
            engine.apply(serving, op)  # idempotent: the log's order is the shard's order
            seq, replayed = max(seq, entry_seq), replayed + 1
        if replayed:
            log.info("vector shard %s: replayed %d logged writes", folder.name, replayed)
        return cls(folder, space, state, serving, seq)

    def write(self, op: engine.Op, rows: list[engine.Row] | None = None) -> None:
        with self.thread_lock:
            self._log_and_apply(op, rows)

    def write_keywords(self, rows: list[engine.KeywordRow]) -> None:
        """Keyword points, rewriting only the changed payload of those whose stored text is the
        same (engine.keyword_writes); the read and the writes hold the lock: nothing between."""
        with self.thread_lock:
            found = self.serving.shard.retrieve([row[0] for row in rows], True, False)
            upserts, ops = engine.keyword_writes(rows, {str(r.id): r.payload or {} for r in found})
            for op in ops:
                self._log_and_apply(op, upserts if isinstance(op, engine.Upsert) else None)

    def _log_and_apply(self, op: engine.Op, rows: list[engine.Row] | None) -> None:
        if isinstance(op, engine.Delete):
            request = qe.CountRequest(exact=True, filter=engine.to_filter(op.filter))
            if self.serving.shard.count(request):
                self._owe_purge()
        self.seq += 1
        self.oplog.append(self.seq, op)
        engine.apply(self.serving.shard, op, rows)
        self.dirty = True

    def _owe_purge(self) -> None:
        """Points are about to be deleted: their payloads stay in the shards' files (WAL,
        segments, payload pages) and in the operation log until both shards are rewritten."""
        self.erase_count += 1
        if self.erase_since is None:
            self.erase_since = time.monotonic()
        if self.state.purge < 2:
            self.state.purge = 2
            self.state.save(self.folder)  # a restart still owes it

    def flush(self) -> None:
        self.dirty = False
        self.last_flush = time.monotonic()
        self.serving.shard.flush()

    def catch_up(self, shard: qe.EdgeShard, after: int) -> int:
        for seq, op in engine.read_ops(self.folder / engine.OPLOG_FILE, after):
            engine.apply(shard, op)
            after = seq
        return after

    def swap(self, built: qe.EdgeShard, after: int, purged: int | None = None) -> None:
        """Make the built standby serve: apply the writes it still lacks, switch, and start a
        new log (both shards now hold every logged write). `purged`: the build was an erasure
        rebuild that started when erase_count was this (None: it was not)."""
        with self.thread_lock:
            self.catch_up(built, after)
            old = self.serving
            self.serving = _Handle(built)
            purge = self.state.purge
            if purged is not None:
                # One shard rewritten; deletes logged during the build need both again.
                purge = 2 if self.erase_count != purged else max(0, purge - 1)
            self.state = engine.PairState(self.state.standby, self.seq, self.seq, purge=purge)
            self.state.save(self.folder)
            self.oplog.reset()
        old.retire()

    def close(self) -> None:
        with self.thread_lock:
            self.serving.shard.flush()
            self.state.serving_seq = self.seq
            self.state.save(self.folder)
            self.oplog.close()
        self.serving.retire()


def _request(search: Search) -> qe.QueryRequest:
    if isinstance(search.vector, keywords.Sparse):
        query = qe.Query.Nearest(qe.SparseVector(search.vector.indices, search.vector.values), using=p.KEYWORD_VECTOR)
    else:
        query = qe.Query.Nearest(list(search.vector))
    corpus = search.idf_corpus
    return qe.QueryRequest(
        limit=search.limit,
        query=query,
        filter=engine.to_filter(search.filter),
        score_threshold=search.min_score,
        with_payload=search.payload,
        params=qe.SearchParams(idf=qe.IdfParams(corpus=engine.to_filter(corpus))) if corpus is not None else None,
    )


class EdgeFolder:
    """What an index over a Qdrant Edge data folder says of itself, whether the engine runs
    in this process (EdgeIndex) or in its own (edge_process.EdgeProcessIndex)."""

    root: Path

    @property
    def shared(self) -> bool:
        return False  # one process owns the folder

    @property
    def target(self) -> str:
        return f"edge:{self.root}"


class EdgeIndex(EdgeFolder, QdrantIndexBase):
    def __init__(
        self,
        root: Path,
        *,
        prefix: str = "memoryd",
        timeout: float = 5.0,
        threads: int = 2,
        build_threads: int = 1,
        rebuild_threshold_kb: int = REBUILD_THRESHOLD_KB,
        indexing_threshold_kb: int = engine.INDEXING_THRESHOLD_KB,
        maintenance_seconds: float = MAINTENANCE_SECONDS,
        lock_retry_seconds: float = LOCK_RETRY_SECONDS,
        migrate_from: Path | None = None,
        reads_on_loop: bool = False,
        min_free_mb: int = MIN_FREE_MB,
        erase_seconds: float = ERASE_SECONDS,
    ) -> None:
        """`reads_on_loop`: run searches, counts and retrievals on the event loop's thread
        instead of the thread pool: for the engine process (edge_process.py), whose loop only
        relays calls, and where Edge, holding the GIL for a whole call, stops the loop from a
        pool thread anyway; the two thread hops a search saves were 0.5-2 ms of that process's
        CPU per search (docs/PERFORMANCE.md, run Q). Writes and index builds stay in the pool.
        `min_free_mb`: the free space writes need on the folder's disk (0: no check).
        `erase_seconds`: how long after a delete its pair's erasure rewrite starts (ERASE_SECONDS)."""
        super().__init__(prefix)
        self.root = Path(root)
        self.timeout = timeout
        self.threads = threads
        self.build_threads = build_threads
        self.rebuild_threshold_kb = rebuild_threshold_kb
        self.indexing_threshold_kb = indexing_threshold_kb
        self.maintenance_seconds = maintenance_seconds
        self.lock_retry_seconds = lock_retry_seconds
        self.migrate_from = migrate_from
        self.reads_on_loop = reads_on_loop
        self.min_free_mb = min_free_mb
        self.erase_seconds = erase_seconds
        self._pairs: dict[int, _Pair] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._lock_handle: Any = None
        self._closed = True
        self._next_attempt = 0.0
        self._lock_warned = False
        self._opening = asyncio.Lock()
        self._create_lock = asyncio.Lock()
        self._maintenance: asyncio.Task | None = None

    # -- lifecycle -------------------------------------------------------------------
    async def open(self) -> None:
        self._closed = False
        self._next_attempt = 0.0
        self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="qdrant-edge")
        try:
            await self._ready()
        except (StorageUnavailable, StorageFull):
            pass  # held by another process, or a full disk: retried on use (see _ready)

    async def _ready(self) -> None:
        """Own the folder (lock, open every shard pair, migrate once), or raise StorageUnavailable
        (StorageFull while its disk is below the reserve)."""
        if self._lock_handle is not None:
            return
        if self._closed:
            raise _unavailable("vector store is closed")
        async with self._opening:
            if self._lock_handle is not None:
                return
            self._check_room()  # loading a shard may write (its WAL): not on a full disk
            now = time.monotonic()
            if now < self._next_attempt:
                raise _unavailable("vector store is in use by another process")
            self._next_attempt = now + self.lock_retry_seconds
            handle = await self._run(self._take_lock, budget=None)
            if handle is None:
                if not self._lock_warned:
                    self._lock_warned = True
                    log.warning(
                        "vector store %s is in use by another process: vectors are unavailable here until it "
                        "is free (Qdrant Edge is one process; several need a Qdrant server)",
                        self.root,
                    )
                raise _unavailable("vector store is in use by another process")
            self._lock_warned = False
            try:
                for folder in sorted(self.root.iterdir()):
                    space = p.space_of(self.prefix, folder.name)
                    if space is not None and folder.is_dir():
                        self._pairs[space] = await self._run(
                            _Pair.open, folder, space, self.build_threads, self.indexing_threshold_kb, budget=None
                        )
            except BaseException:
                await self._release_lock(handle)
                raise
            self._lock_handle = handle
        if self.migrate_from is not None and self.migrate_from.exists():
            from memoryd.storage.qdrant.migrate import migrate_local_mode

            await migrate_local_mode(self.migrate_from, self)
        self._maintenance = asyncio.create_task(self._maintain(), name="qdrant-edge-maintenance")

    def _take_lock(self) -> Any:
        self.root.mkdir(parents=True, exist_ok=True)
        handle = open(self.root / LOCK_FILE, "a+")
        try:
            portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
        except portalocker.exceptions.LockException:
            handle.close()
            return None
        return handle

    async def _release_lock(self, handle: Any) -> None:
        portalocker.unlock(handle)
        handle.close()

    async def close(self) -> None:
        self._closed = True
        if self._maintenance is not None:
            self._maintenance.cancel()
            await asyncio.gather(self._maintenance, return_exceptions=True)
            self._maintenance = None
        pairs, self._pairs = list(self._pairs.values()), {}
        for pair in pairs:
            if pair.builder is not None and pair.builder.returncode is None:
                pair.builder.kill()  # the next run replays the log again
            if pair.build is not None:
                pair.build.cancel()
                await asyncio.gather(pair.build, return_exceptions=True)
            try:
                await self._run(pair.close, budget=None)
            except (StorageUnavailable, StorageFull) as error:
                log.warning("closing vector shard %s failed (%s)", pair.folder.name, error)
        handle, self._lock_handle = self._lock_handle, None
        if handle is not None:
            await self._release_lock(handle)
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown)  # off the loop, as SqliteStore.close

    async def ping(self) -> None:
        await self._ready()
        self._check_room()  # a store that cannot take writes is not serving

    def _low_on_space(self, extra_mb: int = 0) -> bool:
        return bool(self.min_free_mb) and free_bytes(self.root) < (self.min_free_mb + extra_mb) * MIB

    def _check_room(self, extra_mb: int = 0) -> None:
        """Refuse a write (StorageFull) while the disk is below the reserve: see the module doc."""
        if self._low_on_space(extra_mb):
            need = self.min_free_mb + extra_mb
            raise StorageFull(
                f"vector store: its disk has less than the {need} MB free this write needs", store="vectors"
            )

    # -- calls -----------------------------------------------------------------------
    async def _run(
        self, fn: Callable[..., T], *args: Any, budget: float | None | bool = True, handle: _Handle | None = None
    ) -> T:
        """fn(*args) in the thread pool, bounded by the caller's deadline (budget=True) or not
        at all (None). Failures become StorageUnavailable."""
        pool = self._pool
        if pool is None:
            raise _unavailable("vector store is closed")
        seconds = deadline.remaining(self.timeout) if budget is True else budget
        if handle is not None:
            handle.acquire()

        def work() -> T:
            try:
                return fn(*args)
            finally:
                if handle is not None:
                    handle.release()

        try:
            future = pool.submit(work)
        except RuntimeError as error:  # shut down
            if handle is not None:
                handle.release()
            raise _unavailable("vector store is closed") from error
        if handle is not None:
            future.add_done_callback(lambda f: handle.release() if f.cancelled() else None)
        try:
            async with asyncio.timeout(seconds):
                return await asyncio.wrap_future(future)
        except (StorageUnavailable, asyncio.CancelledError):
            raise
        except Exception as error:  # noqa: BLE001 - Edge raises plain Exception for engine errors
            if no_space(error):
                raise StorageFull(f"vector store: no space left ({str(error)[:200]})", store="vectors") from error
            raise _unavailable(f"vector store unavailable ({type(error).__name__}: {str(error)[:200]})") from error

    async def _pair(self, space: int) -> _Pair:
        await self._ready()
        pair = self._pairs.get(space)
        if pair is None:
            raise _unavailable(f"no vector shard {self.collection(space)}")
        return pair

    async def _read(self, space: int, fn: Callable[[qe.EdgeShard], T]) -> T:
        pair = await self._pair(space)
        handle = pair.serving
        if self.reads_on_loop:
            return self._read_now(handle, fn)
        return await self._run(lambda: fn(handle.shard), handle=handle)

    def _read_now(self, handle: _Handle, fn: Callable[[qe.EdgeShard], T]) -> T:
        """fn(shard) on the event loop's thread (reads_on_loop); a call whose deadline has
        passed never runs, failures become StorageUnavailable, as in `_run`."""
        if self._pool is None:
            raise _unavailable("vector store is closed")
        if deadline.remaining() == 0:
            raise _unavailable("the caller's deadline passed before the vector store call")
        handle.acquire()
        try:
            return fn(handle.shard)
        except StorageUnavailable:
            raise
        except Exception as error:  # noqa: BLE001 - Edge raises plain Exception for engine errors
            raise _unavailable(f"vector store unavailable ({type(error).__name__}: {str(error)[:200]})") from error
        finally:
            handle.release()

    async def _write(self, space: int, write: Callable[[_Pair], None]) -> None:
        """write(pair) in the thread pool; writers wait on the pair's lock, not in the pool."""
        self._check_room()
        pair = await self._pair(space)
        async with pair.write_lock:
            await self._run(write, pair)

    # -- primitives ------------------------------------------------------------------
    async def dimensions(self) -> list[int]:
        await self._ready()
        return sorted(space for space in self._pairs if space != p.KEYWORD_SPACE)

    async def _exists(self, space: int) -> bool:
        await self._ready()
        return space in self._pairs

    async def _ensure(self, space: int) -> None:
        self._check_room()  # first: a write on a full disk is StorageFull, whether the folder is open or not
        await self._ready()
        if space in self._pairs:
            return
        self._check_room(NEW_PAIR_MB)
        async with self._create_lock:
            if space not in self._pairs:
                folder = self.root / self.collection(space)
                self._pairs[space] = await self._run(
                    _Pair.open, folder, space, self.build_threads, self.indexing_threshold_kb, budget=None
                )
                log.info("vector shard ready: %s", folder.name)

    async def _upsert(self, space: int, points: list[engine.Row]) -> None:
        await self._write(space, lambda pair: pair.write(engine.Upsert.of(points), points))

    async def _upsert_keywords(self, rows: list[engine.KeywordRow]) -> None:
        await self._write(p.KEYWORD_SPACE, lambda pair: pair.write_keywords(rows))

    async def _delete(self, space: int, flt: p.All) -> None:
        await self._write(space, lambda pair: pair.write(engine.Delete(flt)))

    async def _count(self, space: int, flt: p.All) -> int:
        request = qe.CountRequest(exact=True, filter=engine.to_filter(flt))
        return await self._read(space, lambda shard: shard.count(request))

    async def _facet(self, space: int, key: str, flt: p.All) -> list[tuple[Any, int]]:
        request = qe.FacetRequest(key, limit=p.FACET_LIMIT, exact=True, filter=engine.to_filter(flt))
        response = await self._read(space, lambda shard: shard.facet(request))
        return [(hit.value, hit.count) for hit in response.hits]

    async def _search(self, space: int, searches: list[Search]) -> list[list[Found]]:
        requests = [_request(s) for s in searches]

        def run(shard: qe.EdgeShard) -> list[list[Found]]:
            results = (
                shard.query_batch(qe.QueryBatchRequest(requests)) if len(requests) > 1 else [shard.query(requests[0])]
            )
            return [[Found(str(pt.id), pt.score, pt.payload or {}) for pt in r] for r in results]

        return await self._read(space, run)

    async def indexing(self, space: int) -> tuple[int, int]:
        """(points, points in HNSW-indexed segments) of the space's serving shard."""
        info = await self._read(space, lambda shard: shard.info())
        return info.points_count, info.indexed_vectors_count

    async def retrieve(self, space: int, ids: list[str]) -> list[Any]:
        """Records (id, vector, payload) of those of the points that exist."""
        wanted: list[int | UUID | str] = list(ids)
        return await self._read(space, lambda shard: shard.retrieve(wanted, True, True))

    async def _scroll(
        self, space: int, flt: p.All, offset: str | None, limit: int, with_vectors: bool = True
    ) -> tuple[list[tuple[list[float], dict[str, Any]]], str | None]:
        request = qe.ScrollRequest(
            offset=offset, limit=limit, filter=engine.to_filter(flt), with_payload=True, with_vector=with_vectors
        )
        records, after = await self._read(space, lambda shard: shard.scroll(request))
        return [
            (list(cast(list[float], r.vector)) if with_vectors else [], dict(r.payload or {})) for r in records
        ], None if after is None else str(after)

    async def _contains(self, space: int, point_id: str) -> bool:
        return bool(await self._read(space, lambda shard: shard.retrieve([point_id], False, False)))

    # -- background: flush and index builds ------------------------------------------
    async def _maintain(self) -> None:
        while True:
            shutdown.raise_if_cancelled()
            await asyncio.sleep(self.maintenance_seconds)
            for pair in list(self._pairs.values()):
                try:
                    await self._maintain_pair(pair)
                except (StorageUnavailable, StorageFull) as error:
                    log.warning("vector shard %s maintenance failed (%s)", pair.folder.name, error)

    async def _maintain_pair(self, pair: _Pair) -> None:
        if pair.dirty and time.monotonic() - pair.last_flush >= FLUSH_SECONDS:
            await self._run(pair.flush, budget=None)
        if pair.build is not None or time.monotonic() < pair.next_build or self._low_on_space():
            return
        if pair.state.purge and (pair.erase_since is None or time.monotonic() - pair.erase_since >= self.erase_seconds):
            name = f"qdrant-edge-erase-{pair.space}"
            pair.build = asyncio.create_task(self._build_in_background(pair, True), name=name)
            return
        handle = pair.serving
        waiting = await self._run(engine.unindexed, handle.shard, budget=None, handle=handle)
        logged = (pair.folder / engine.OPLOG_FILE).stat().st_size
        threshold = self.rebuild_threshold_kb * 1024
        # (A keyword shard's sparse vectors are always indexed: only its log starts builds.)
        if pair.state.reindex or waiting * pair.space * 4 >= threshold or logged >= threshold * REBUILD_LOG_FACTOR:
            pair.build = asyncio.create_task(self._build_in_background(pair), name=f"qdrant-edge-build-{pair.space}")

    async def _build_in_background(self, pair: _Pair, purge: bool = False) -> None:
        try:
            if not await self.rebuild(pair.space, purge=purge):
                pair.next_build = time.monotonic() + BUILD_RETRY_SECONDS
        finally:
            pair.build = None

    async def rebuild(self, space: int, *, purge: bool = False) -> bool:
        """Bring the standby up to date and index it in the builder process, then swap it in.
        Searches and writes go on meanwhile; the swap itself holds writes for the few writes
        that arrived last. False (logged) when the builder failed. `purge`: an erasure
        rebuild, the standby rewritten from its live points (edge_build.py)."""
        pair = await self._pair(space)
        standby = pair.state.standby
        started = time.monotonic()
        purged = None
        extra: list[str] = []
        if purge:
            purged, pair.erase_since = pair.erase_count, None
            extra = [str(self.build_threads), str(self.indexing_threshold_kb)]
        pair.builder = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "memoryd.storage.qdrant.edge_build",
            str(pair.folder),
            standby,
            str(pair.state.standby_seq),
            str(pair.space),
            *extra,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await pair.builder.communicate()
        code, pair.builder = pair.builder.returncode, None
        if code != 0:
            log.warning("vector index build of %s failed (exit %s): %s", pair.folder.name, code, err.decode()[-500:])
            return False
        report = json.loads(out)
        built, _ = await self._run(engine.load_shard, pair.folder / standby, pair.space, budget=None)
        after = await self._run(pair.catch_up, built, report["seq"], budget=None)
        async with pair.write_lock:
            await self._run(pair.swap, built, after, purged, budget=None)
        log.info(
            "vector shard %s %s: %d points, %d indexed, %d segments; %d logged writes applied in %.1fs, "
            "indexed in %.1fs; %.1fs in all",
            pair.folder.name,
            "rewritten (erasure)" if purge else "rebuilt",
            report["points"],
            report["indexed"],
            report["segments"],
            report["applied"],
            report["apply_seconds"],
            report["optimize_seconds"],
            time.monotonic() - started,
        )
        return True

    def erasure_pending(self) -> bool:
        """Whether a pair still owes an erasure rewrite (deleted points' payloads may still be
        in its files)."""
        return any(pair.state.purge for pair in self._pairs.values())
