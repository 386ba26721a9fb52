"""The embedded vector index (EdgeIndex) in a process of its own, behind the same VectorIndex.

qdrant-edge-py 0.9 holds the GIL for the whole of every engine call (query, count, update:
docs/PERFORMANCE.md, run P), so in the server process each search's engine time stops the
event loop. Here the engine runs in a child process with its own GIL; the server process
only sends each call (pickled, over a socket pair) and awaits the answer.

- The child owns the data dir's vector folder exactly as an in-process EdgeIndex would (lock
  file, shards, builder processes): `python -m memoryd.storage.qdrant.edge_process <socket fd>
  <log level> <folder> <EdgeIndex settings, JSON>`. It answers calls concurrently, each bounded by the
  caller's remaining deadline, which travels with the call.
- The child exits when the server process closes the socket (its stop) or dies (end of file,
  or the parent-death signal), closing the shards on the way; writes it acknowledged are in
  the shards' WAL already. It ignores SIGINT and SIGTERM sent to the whole process group.
- If the child dies, calls in flight and new ones get StorageUnavailable and the next call
  starts a new child: the server recovers by itself, like a reconnect to a Qdrant server.
  A child that keeps dying soon after its start (a disk the engine's maps cannot grow on)
  is started again only after a pause that doubles each time: no crash loop.
- `--workers N`: one engine process per data dir serves every worker over a Unix socket
  (edge_shared.py); a worker's EdgeProcessIndex is then given `socket_path` and connects
  instead of starting a child, and reconnects on the next call when the connection drops.
- Besides the index, an engine process may host the data dir's background work: a program
  whose entry point calls `main(argv, background=...)` (memoryd/engine.py: the log
  consumers) is started as `python -m <entry>` in place of this module. `background` runs
  once the index is open, as `await background(engine)` (the `Engine`: its `index`,
  `database` (the data dir's SQLite file) and `host` (what the server passed, e.g.
  settings)), and is cancelled when the engine stops; it may answer calls of its own
  (`Engine.calls`, by name: `runtime_wake`, `runtime_state`). `host["env"]` (secrets)
  reaches the engine process in its environment, never on its command line.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import copyreg
import dataclasses
import itertools
import json
import logging
import os
import pickle
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import portalocker

from memoryd import shutdown
from memoryd.domain import deadline
from memoryd.domain.errors import MemorydError, StorageFull, StorageUnavailable
from memoryd.domain.vectors import (
    Candidate,
    CollectionCount,
    Deleted,
    IndexQuery,
    IndexResult,
    KeywordPoint,
    ModelCount,
    PointFilter,
    Scope,
    VectorPoint,
    VectorRecord,
    VectorSelector,
)
from memoryd.storage.qdrant.edge import EdgeFolder, EdgeIndex

log = logging.getLogger(__name__)

_HEADER = struct.Struct("!I")
# The shared engine (edge_shared.py) prints this once it listens.
READY = b"ready\n"
# A Unix socket's path must fit in sun_path (108 bytes on Linux, with its NUL); a longer one
# is reached through /proc/self/fd/<the folder's fd>/<name>.
_MAX_PATH = 100


def _pickle_by_fields(cls: type) -> None:
    """Pickle the dataclass as its constructor's arguments: about half the cost of pickle's
    default for frozen, slotted dataclasses, on every search's candidates."""
    names = tuple(f.name for f in dataclasses.fields(cls))
    copyreg.pickle(cls, lambda obj: (cls, tuple(getattr(obj, name) for name in names)))


for _cls in (
    VectorRecord,
    Candidate,
    IndexResult,
    IndexQuery,
    PointFilter,
    Scope,
    VectorPoint,
    KeywordPoint,
    VectorSelector,
    Deleted,
    ModelCount,
    CollectionCount,
):
    _pickle_by_fields(_cls)

# The calls a child answers: the VectorIndex protocol (domain/vectors.py) and, as both Qdrant
# adapters have it, `dimensions`.
CALLS = frozenset(
    {
        "open",
        "ping",
        "upsert",
        "upsert_keywords",
        "delete",
        "query",
        "has_point",
        "has_keyword_point",
        "model_dimensions",
        "stats",
        "dimensions",
        "scroll",
        "messages",
    }
)
# How long a child may take to start, and to close its shards on stop (then it is killed).
START_SECONDS = 30.0
STOP_SECONDS = shutdown.ENGINE_STOP_SECONDS
# What the parent adds to a call's own deadline before it gives up on the child's answer
# (the child bounds the call itself; this covers the trip).
REPLY_MARGIN_SECONDS = 1.0
# A child that exits unexpectedly is replaced by the next call at once. While children keep
# dying within RESPAWN_RESET_SECONDS of their start, each next one waits first: RESPAWN_FIRST_SECONDS,
# doubling with each death up to RESPAWN_MAX_SECONDS.
RESPAWN_FIRST_SECONDS = 0.5
RESPAWN_MAX_SECONDS = 30.0
RESPAWN_RESET_SECONDS = 60.0


async def _send(writer: asyncio.StreamWriter, message: Any) -> None:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    writer.write(_HEADER.pack(len(body)) + body)
    await writer.drain()


async def _receive(reader: asyncio.StreamReader) -> Any:
    (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
    return pickle.loads(await reader.readexactly(size))


class EdgeProcessIndex(EdgeFolder):
    """VectorIndex whose calls an EdgeIndex in a child process answers."""

    def __init__(
        self,
        root: Path,
        *,
        timeout: float = 5.0,
        log_level: str = "info",
        socket_path: Path | None = None,
        database: Path | None = None,
        entry: str | None = None,
        options: dict[str, Any] | None = None,
        respawn_first_seconds: float = RESPAWN_FIRST_SECONDS,
        **settings: Any,
    ) -> None:
        """`settings`: EdgeIndex's keyword arguments (plain values and paths). `socket_path`:
        connect to the shared engine process listening there (edge_shared.py) instead of
        starting a child; `database` and `entry`: what a child started here hosts (module doc);
        `options`: the host's settings for its background work (host_spec);
        `respawn_first_seconds`: the first pause before replacing a child that keeps dying."""
        self.root = Path(root)
        self.socket_path = socket_path
        self.host = host_spec(database, options)
        self.entry = entry
        self.prefix = settings.get("prefix", "memoryd")  # of its collections' names, as EdgeIndex's
        self.timeout = timeout
        self.log_level = log_level
        self.settings = {"timeout": timeout, **{k: str(v) if isinstance(v, Path) else v for k, v in settings.items()}}
        self._child: asyncio.subprocess.Process | Remote | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task | None = None
        self._pending: dict[int, asyncio.Future] = {}
        self._ids = itertools.count()
        self._starting = asyncio.Lock()
        self._closed = True
        self.respawn_first_seconds = respawn_first_seconds
        self._respawn_delay = 0.0
        self._quick_deaths = 0  # children in a row that died within RESPAWN_RESET_SECONDS
        self._started_at = 0.0
        self._next_start = 0.0  # monotonic: no child starts before it

    @property
    def pid(self) -> int | None:
        """The engine process's, while one runs."""
        return self._child.pid if self._child is not None else None

    # -- lifecycle -------------------------------------------------------------------
    async def open(self) -> None:
        self._closed = False
        try:
            await self._writer_ready()
        except (StorageUnavailable, StorageFull) as error:
            if self.socket_path is None and not isinstance(error, StorageFull):
                raise
            # The shared engine is its supervisor's to (re)start, as a Qdrant server, and a full
            # disk is waited out: retried on use.
            log.warning("vector engine at %s unavailable (%s); retried on use", self.socket_path or self.root, error)

    async def close(self) -> None:
        self._closed = True
        child, writer = self._child, self._writer
        if child is None:
            return
        if writer is not None:
            writer.close()  # end of file: the child closes its shards and exits
        try:
            async with asyncio.timeout(STOP_SECONDS):
                await child.wait()
        except TimeoutError:
            log.warning("vector engine process %s did not stop in %.0fs: killed", child.pid, STOP_SECONDS)
            child.kill()
            await child.wait()
        await self._forget(child, "vector store is closed")
        if self._reader_task is not None:
            await asyncio.gather(self._reader_task, return_exceptions=True)
            self._reader_task = None

    async def _start(self) -> None:
        if self.socket_path is not None:
            reader, writer = await connect(self.socket_path)
            self._child, self._writer = Remote(), writer
            self._reader_task = asyncio.create_task(self._read_replies(self._child, reader))
            log.info("connected to the vector engine at %s", self.socket_path)
            return
        parent, ours = socket.socketpair()
        try:
            child = await asyncio.create_subprocess_exec(
                *command(str(parent.fileno()), self.log_level, self.root, self.settings, self.host, self.entry),
                pass_fds=(parent.fileno(),),
                stdin=asyncio.subprocess.DEVNULL,
                env=environment(self.host),
            )
        finally:
            parent.close()
        reader, writer = await asyncio.open_connection(sock=ours)
        self._child, self._writer = child, writer
        self._started_at = time.monotonic()
        self._reader_task = asyncio.create_task(self._read_replies(child, reader))
        log.info("vector engine process %s started for %s", child.pid, self.root)

    async def _read_replies(self, child: asyncio.subprocess.Process | Remote, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                call_id, ok, value = await _receive(reader)
                future = self._pending.pop(call_id, None)
                if future is not None and not future.done():
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(value)
                # Not kept until the next reply: a raised error's traceback holds the caller's frames.
                future = value = None
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        code = await child.wait()
        if not self._closed:
            if self.socket_path is None:  # a shared engine's restarts are its supervisor's
                self._pause_respawn()
            log.warning(
                "vector engine process %s exited (code %s); the next call starts another in %.1fs or later",
                child.pid,
                code,
                self._respawn_delay,
            )
        await self._forget(child, f"vector engine process exited (code {code})")

    def _pause_respawn(self) -> None:
        now = time.monotonic()
        self._quick_deaths = self._quick_deaths + 1 if now - self._started_at < RESPAWN_RESET_SECONDS else 1
        # The first death is replaced at once (a kill, the OOM killer); the next ones wait, doubling.
        repeats = self._quick_deaths - 1
        self._respawn_delay = (
            min(RESPAWN_MAX_SECONDS, self.respawn_first_seconds * 2 ** (repeats - 1)) if repeats else 0.0
        )
        self._next_start = now + self._respawn_delay

    async def _forget(self, child: asyncio.subprocess.Process | Remote, reason: str) -> None:
        if self._child is not child:
            return
        self._child, writer, self._writer = None, self._writer, None
        if writer is not None:
            writer.close()
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(StorageUnavailable(reason))

    # -- calls -----------------------------------------------------------------------
    async def _writer_ready(self) -> asyncio.StreamWriter:
        """The socket to a running engine process whose index is open: started (and opened)
        here when there is none."""
        if self._closed:
            raise StorageUnavailable("vector store is closed")
        if self._writer is None:
            async with self._starting:
                if self._writer is None:
                    wait = self._next_start - time.monotonic()
                    if wait > 0:
                        raise StorageUnavailable(f"vector engine process restarts in {wait:.1f}s (it exited)")
                    try:
                        async with asyncio.timeout(START_SECONDS):
                            await self._start()
                    except (OSError, TimeoutError) as error:
                        raise StorageUnavailable(f"vector engine process did not start ({error})") from error
                    # Opening may migrate an old data dir first (minutes, logged): no deadline.
                    await self._roundtrip(self._writer, "open", (), None)
        writer = self._writer
        if writer is None:
            raise StorageUnavailable("vector engine process exited")
        return writer

    async def _call(self, name: str, *args: Any) -> Any:
        writer = await self._writer_ready()
        remaining = deadline.remaining(self.timeout)
        if remaining is not None and remaining <= 0:
            # As in EdgeIndex: a call whose deadline has passed before it ran never runs.
            raise StorageUnavailable("the caller's deadline passed before the vector engine call")
        return await self._roundtrip(writer, name, args, remaining)

    async def _roundtrip(
        self, writer: asyncio.StreamWriter | None, name: str, args: tuple, remaining: float | None
    ) -> Any:
        if writer is None:
            raise StorageUnavailable("vector engine process exited")
        call_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        try:
            await _send(writer, (call_id, name, args, remaining))
            async with asyncio.timeout(None if remaining is None else remaining + REPLY_MARGIN_SECONDS):
                return await future
        except TimeoutError as error:
            raise StorageUnavailable("vector engine process did not answer in time") from error
        except (ConnectionError, OSError) as error:
            raise StorageUnavailable(f"vector engine process unreachable ({error})") from error
        finally:
            self._pending.pop(call_id, None)
            # A failed call's exception keeps this frame (its traceback) and the future keeps the
            # exception: a cycle that holds the call's arguments (64 messages of up to 1 MiB in an
            # indexing batch) until a full garbage collection, which a quiet server never runs.
            del future

    async def ping(self) -> None:
        await self._call("ping")

    async def upsert(self, points: Sequence[VectorPoint], indexed_at: int) -> list[str]:
        # array("f"): half the bytes to pickle; the engine reads it as the list it is typed as.
        return await self._call(
            "upsert", [replace(p, vector=cast(list[float], _float32(p.vector))) for p in points], indexed_at
        )

    async def upsert_keywords(self, points: Sequence[KeywordPoint], indexed_at: int) -> list[str]:
        return await self._call("upsert_keywords", list(points), indexed_at)

    async def delete(self, selector: VectorSelector) -> Deleted:
        return await self._call("delete", selector)

    async def query(self, query: IndexQuery) -> IndexResult:
        return await self._call("query", replace(query, vector=_float32(query.vector)))

    async def has_point(self, dimension: int, point_id: str) -> bool:
        return await self._call("has_point", dimension, point_id)

    async def has_keyword_point(self, point_id: str) -> bool:
        return await self._call("has_keyword_point", point_id)

    async def model_dimensions(self, tenant: str, model_id: str) -> list[int]:
        return await self._call("model_dimensions", tenant, model_id)

    async def stats(self, tenant: str) -> tuple[list[ModelCount], list[CollectionCount]]:
        return await self._call("stats", tenant)

    async def scroll(
        self, tenant: str, dimension: int, offset: str | None, limit: int
    ) -> tuple[list[VectorPoint], str | None]:
        return await self._call("scroll", tenant, dimension, offset, limit)

    async def dimensions(self) -> list[int]:
        """The dimensions that have a collection (shard)."""
        return await self._call("dimensions")

    async def messages(
        self, tenant: str, dimension: int, offset: str | None, limit: int
    ) -> tuple[list[tuple[str, str]], str | None]:
        return await self._call("messages", tenant, dimension, offset, limit)

    # -- the background work's calls (consumers/remote.py's RuntimeLink) -----------------
    async def runtime_wake(self, urgent: bool = False, consumer: str = "") -> None:
        await self._call("runtime_wake", urgent, consumer)

    async def runtime_state(self, wake: bool = False, urgent: bool = False, consumer: str = "") -> dict[str, Any]:
        return await self._call("runtime_state", wake, urgent, consumer)


def host_spec(database: Path | None, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """What an engine process hosts besides the index (module doc): `options` holds its
    background work's settings ("env": secrets, passed in the environment)."""
    return {"database": None if database is None else str(database), **(options or {})}


def command(
    endpoint: str, log_level: str, root: Path, settings: dict[str, Any], host: dict[str, Any], entry: str | None = None
) -> list[str]:
    """An engine process's command line; `endpoint`: a socket's fd, or unix:<path> to listen
    on; `entry`: the module run (`python -m`; None: this one, the index alone)."""
    public = {k: v for k, v in host.items() if k != "env"}
    module = entry or __name__
    return [sys.executable, "-m", module, endpoint, log_level, str(root), json.dumps(settings), json.dumps(public)]


def environment(host: dict[str, Any]) -> dict[str, str] | None:
    """An engine process's environment: its parent's, with the host's secrets (None: the parent's)."""
    return {**os.environ, **host["env"]} if host.get("env") else None


def _float32(vector: Sequence[float]) -> array.array:
    """A vector as float32s, as Edge stores it: pickled as its bytes (a fifth of what a list
    of floats costs to pickle and unpickle, about 20 µs per 384 dimensions)."""
    return array.array("f", vector)


# -- the child ----------------------------------------------------------------------------
# The child stops when the server process says so (end of file), not on the terminal's or a
# service manager's signals to the whole group: the server may still be writing while it stops.
# PARENT_GONE is a second way out when the server process dies (Linux's parent-death signal).
PARENT_GONE = signal.SIGUSR1


def _stop_with_parent_only() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    shutdown.signal_on_parent_death(PARENT_GONE)


Background = Callable[["Engine"], Coroutine[Any, Any, None]]


class Engine:
    """An engine process's index and the background work it hosts, answering the calls of one
    connection (the server process's) or of many (edge_shared.py, one per worker)."""

    def __init__(
        self, root: Path, settings: dict[str, Any], host: dict[str, Any], background: Background | None = None
    ) -> None:
        if settings.get("migrate_from"):
            settings["migrate_from"] = Path(settings["migrate_from"])
        self.index = EdgeIndex(root, reads_on_loop=True, **settings)
        self.database = Path(host["database"]) if host.get("database") else None
        self.background = background
        self.host = host
        self.calls: dict[str, Any] = {}  # the background work's own calls, by name
        self._opened: asyncio.Task | None = None
        self._background: list[asyncio.Task] = []

    async def open(self) -> None:
        """Open the index and start the background work, once however many clients ask."""
        if self._opened is None or (self._opened.done() and self._opened.exception() is not None):
            self._opened = asyncio.create_task(self._open())
        await asyncio.shield(self._opened)

    async def _open(self) -> None:
        await self.index.open()
        if self.background is not None:
            self._background.append(asyncio.create_task(self.background(self), name="engine-background"))

    async def close(self) -> None:
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await self.index.close()

    async def serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, stop: asyncio.Event | None = None
    ) -> None:
        """Answer one connection's calls until it closes (or `stop` is set)."""
        tasks: set[asyncio.Task] = set()

        async def answer(call_id: int, name: str, args: tuple, remaining: float | None) -> None:
            token = deadline.set_remaining(remaining)
            try:
                if name in self.calls:
                    call = self.calls[name]
                elif name not in CALLS:
                    raise StorageUnavailable(f"unknown vector engine call {name!r}")
                else:
                    call = self.open if name == "open" else getattr(self.index, name)
                reply = (call_id, True, await call(*args))
            except MemorydError as error:
                reply = (call_id, False, _portable(error))
            except Exception as error:  # noqa: BLE001 - every failure reaches the caller as unavailable
                log.exception("vector engine call %s failed", name)
                reply = (call_id, False, StorageUnavailable(f"vector store failed ({type(error).__name__})"))
            finally:
                deadline.reset(token)
            with contextlib.suppress(ConnectionError, OSError):
                await _send(writer, reply)
            del reply  # as in _roundtrip: a caught error's traceback holds this frame, and the call's arguments

        async def read_calls() -> None:
            with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, OSError):
                while True:
                    task = asyncio.create_task(answer(*await _receive(reader)))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)

        reading = asyncio.create_task(read_calls())
        waits = [reading] if stop is None else [reading, asyncio.create_task(stop.wait())]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in waits:
            task.cancel()
        await asyncio.gather(*waits, *tasks, return_exceptions=True)
        writer.close()


async def _serve(
    fd: int, root: Path, settings: dict[str, Any], host: dict[str, Any], background: Background | None
) -> None:
    engine = Engine(root, settings, host, background)
    reader, writer = await asyncio.open_connection(sock=socket.socket(fileno=fd))
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(PARENT_GONE, stop.set)
    await engine.serve(reader, writer, stop)
    await engine.close()


# -- the shared engine process (edge_shared.py) ------------------------------------------
def serve_shared(
    path: Path, root: Path, settings: dict[str, Any], host: dict[str, Any], background: Background | None = None
) -> int:
    lock = open(path.with_name(path.name + ".lock"), "a+")
    try:
        portalocker.lock(lock, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
    except portalocker.exceptions.LockException:
        log.error("vector engine: %s is served by another process", path)
        return 3
    try:
        asyncio.run(_serve_shared(path, root, settings, host, background))
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        lock.close()
    return 0


async def _serve_shared(
    path: Path, root: Path, settings: dict[str, Any], host: dict[str, Any], background: Background | None
) -> None:
    engine = Engine(root, settings, host, background)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(PARENT_GONE, stop.set)
    # The supervisor's pipe: its end (supervisor stopped or gone) is the stop.
    control = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(control), sys.stdin)
    watching = asyncio.create_task(control.read())
    watching.add_done_callback(lambda _: stop.set())
    connections: set[asyncio.Task] = set()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # a connection handler runs in its task
        connections.add(task)
        try:
            await engine.serve(reader, writer, stop)
        finally:
            connections.discard(task)

    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a socket left by an engine that was killed (we hold the lock)
    with _reachable(path) as name:
        server = await asyncio.start_unix_server(client, name)
    opening = asyncio.create_task(engine.open())  # the background work runs without waiting for a client
    os.write(sys.stdout.fileno(), READY)
    log.info("vector engine serving %s on %s", root, path)
    await stop.wait()
    server.close()
    await asyncio.gather(*connections, return_exceptions=True)
    await asyncio.gather(opening, return_exceptions=True)
    await engine.close()
    watching.cancel()


@contextlib.contextmanager
def _reachable(path: Path):
    """A name of `path` short enough to bind or connect to."""
    if len(os.fsencode(path)) <= _MAX_PATH:
        yield str(path)
        return
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{path.name}"
    finally:
        os.close(folder)


async def connect(path: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    with _reachable(path) as name:
        return await asyncio.open_unix_connection(name)


class Remote:
    """Stands for the shared engine process in EdgeProcessIndex (in place of its own child):
    the supervisor owns that process; closing the connection is all a worker does."""

    pid = None
    returncode = None

    async def wait(self) -> None:
        return None

    def kill(self) -> None:
        pass


def _portable(error: MemorydError) -> MemorydError:
    """The error as the parent can unpickle it (the domain's errors take keyword arguments)."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001
        return StorageUnavailable(str(error))


def main(argv: list[str], background: Background | None = None) -> int:
    """The engine process (its command line: `command`); `background`: the work it hosts
    beside the index (memoryd/engine.py)."""
    from memoryd import allocator, logs

    endpoint, level, root, settings = argv[0], argv[1], Path(argv[2]), json.loads(argv[3])
    host = json.loads(argv[4]) if len(argv) > 4 else {}
    logs.configure(level)
    allocator.manage()  # the engine's threads keep a burst's pages in their arenas too
    _stop_with_parent_only()
    if endpoint.startswith("unix:"):
        return serve_shared(Path(endpoint.removeprefix("unix:")), root, settings, host, background)
    asyncio.run(_serve(int(endpoint), root, settings, host, background))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
