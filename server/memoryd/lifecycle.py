"""`memoryd forget-user`, `memoryd export`, `memoryd import`: the lifecycle commands.

Each takes the storage settings of `memoryd serve` (its flags and environment: --data-dir
or --mongodb-uri, ...) and opens the store itself, so it works on the data of a running
server (SQLite and MongoDB both take a second writer: the server sees the commands' events
as it sees another replica's) or of a stopped one. Progress and results go to stderr as
JSON lines; an export's stream goes to --output or stdout, an import's comes from --input
or stdin (docs/OPERATIONS.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shlex
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import structlog

from memoryd import config as config_module
from memoryd.domain.errors import MemorydError
from memoryd.domain.models import DEFAULT_TENANT
from memoryd.domain.store import Store
from memoryd.domain.transfer import Counts, Exporter, Importer, TransferError
from memoryd.domain.vectors import VectorIndex

T = TypeVar("T")
PROGRESS_SECONDS = 2.0
WRITE_BUFFER = 1 << 20

log = structlog.get_logger("memoryd.lifecycle")


def add_commands(commands: argparse._SubParsersAction) -> None:
    forget = commands.add_parser(
        "forget-user",
        help="forget a user: every session it owns and its entry scope (MemoryService.ForgetUser, offline or online)",
    )
    config_module.add_arguments(forget)
    forget.add_argument(
        "user_id", help="the user to forget (SessionAttributes.user_id, and the entry scope of that name)"
    )
    forget.add_argument("--tenant", default=DEFAULT_TENANT, help="the tenant the user is in (default: %(default)s)")
    export = commands.add_parser("export", help="write a consistent snapshot of the store as JSON lines")
    config_module.add_arguments(export)
    export.add_argument("--tenant", action="append", default=[], help="export this tenant (repeatable; default: all)")
    export.add_argument("--output", default="-", help="file to write (default: stdout)")
    export.add_argument(
        "--vectors", action="store_true", help="export the dense vectors too (Qdrant Edge: only of a stopped server)"
    )
    load = commands.add_parser("import", help="write an export into the store (idempotent: run it again to finish)")
    config_module.add_arguments(load)
    load.add_argument("--input", default="-", help="file to read (default: stdin)")
    load.add_argument(
        "--vectors", action="store_true", help="upsert the export's vectors (Qdrant Edge: only with the server stopped)"
    )

    reindex = commands.add_parser(
        "reindex",
        help="rebuild the recall index from the message store (Qdrant Edge: with the server stopped; "
        "a Qdrant server: online too)",
    )
    config_module.add_arguments(reindex)
    reindex.add_argument("--tenant", action="append", default=[], help="rebuild this tenant (repeatable; default: all)")


def run(args: argparse.Namespace, config: config_module.Config) -> int:
    command = {"forget-user": forget_user, "export": export, "import": import_, "reindex": reindex}[args.command]
    try:
        return asyncio.run(command(args, config))
    except TransferError as error:
        log.error(f"{args.command}_failed", error=str(error))
    except MemorydError as error:
        log.error(f"{args.command}_failed", reason=error.reason, error=str(error))
    return 1


async def _opened(resource: Any, job: Callable[[Any], Awaitable[T]]) -> T:
    """`job(resource)` between its open() and its close()."""
    await resource.open()
    try:
        return await job(resource)
    finally:
        await resource.close()


async def _with_store(config: config_module.Config, job: Callable[[Store], Awaitable[T]]) -> T:
    from memoryd.app import open_store

    return await _opened(open_store(config), job)


async def _with_index(
    config: config_module.Config, wanted: bool, job: Callable[[VectorIndex | None], Awaitable[T]]
) -> T:
    """`job` with the vector store of `config` open, when `wanted` (else None)."""
    if not wanted:
        return await job(None)
    from memoryd.vectors.setup import build_index

    return await _opened(build_index(config, hosting=False), job)


def _peak_rss_mib() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class _Progress:
    """Logs the counts every PROGRESS_SECONDS, and once at the end with rates and peak RSS."""

    def __init__(self, event: str, volume: Callable[[], int]) -> None:
        self.event = event
        self.volume = volume
        self.started = self.last = time.monotonic()

    def __call__(self, counts: Counts) -> None:
        if time.monotonic() - self.last >= PROGRESS_SECONDS:
            self.last = time.monotonic()
            log.info(f"{self.event}_progress", **vars_of(counts), bytes=self.volume(), rss_mib=_peak_rss_mib())

    def done(self, counts: Counts, **extra: Any) -> None:
        seconds = max(time.monotonic() - self.started, 1e-9)
        read = {name: value for name, value in vars_of(counts).items() if self.event == "import" or "_" not in name}
        log.info(
            f"{self.event}_done", **read, bytes=self.volume(), seconds=round(seconds, 2),
            messages_per_second=round(counts.messages / seconds), peak_rss_mib=_peak_rss_mib(), **extra,
        )  # fmt: skip


def vars_of(counts: Counts) -> dict[str, int]:
    return {name: getattr(counts, name) for name in counts.__slots__}


async def forget_user(args: argparse.Namespace, config: config_module.Config) -> int:
    from memoryd.domain.hooks import MessageHooks
    from memoryd.domain.memory import Memory
    from memoryd.vectors.setup import build_vectors

    async def forget(store: Store, vectors: MessageHooks | None) -> tuple:
        memory = Memory(store, config.limits, vectors, user_entry_scope=config.user_entry_scope)
        return await memory.forget_user(args.tenant, args.user_id)

    async def job(store: Store) -> int:
        # The vector side as a server has it: on Qdrant Edge held by a running server, its
        # clears wait in the event log for that server's index synchronizer.
        if config.vectors_enabled:
            forgotten, cleared, event_seq = await _opened(
                build_vectors(config, store, serving=False), partial(forget, store)
            )
        else:
            forgotten, cleared, event_seq = await forget(store, None)
        log.info(
            "user_forgotten", tenant=args.tenant, sessions=forgotten.sessions, messages=forgotten.messages,
            metadata=forgotten.metadata, entries=forgotten.entries, vectors=cleared.outcome.name.lower(),
            vectors_removed=cleared.removed_count, complete=forgotten.complete, event_seq=event_seq,
        )  # fmt: skip
        return 0

    return await _with_store(config, job)


async def export(args: argparse.Namespace, config: config_module.Config) -> int:
    path = None if args.output == "-" else Path(args.output)
    partial = path.with_name(path.name + ".partial") if path else None
    out: BinaryIO = open(partial, "wb", buffering=WRITE_BUFFER) if partial else sys.stdout.buffer
    written = [0]

    def write(line: bytes) -> None:
        out.write(line)
        written[0] += len(line)

    progress = _Progress("export", lambda: written[0])

    async def job(store: Store) -> tuple[dict[str, Any], Counts]:
        async def with_index(index: VectorIndex | None) -> tuple[dict[str, Any], Counts]:
            exporter = Exporter(store, write, progress, index)
            return await exporter.run(args.tenant), exporter.counts

        return await _with_index(config, args.vectors, with_index)

    try:
        header, counts = await _with_store(config, job)
        out.flush()
        if partial is not None and path is not None:
            os.fsync(out.fileno())
            out.close()
            partial.replace(path)  # only a complete export takes the name asked for
    finally:
        if partial is not None and not out.closed:
            out.close()
    progress.done(counts, tenants=json.dumps({t: p["event_seq"] for t, p in header["tenants"].items()}))
    return 0


async def import_(args: argparse.Namespace, config: config_module.Config) -> int:
    from_file = args.input != "-"
    source: BinaryIO = open(args.input, "rb") if from_file else sys.stdin.buffer
    read = [0]

    def lines():
        for line in source:
            read[0] += len(line)
            yield line

    progress = _Progress("import", lambda: read[0])
    importer: Importer | None = None

    def retrying(where: str, attempt: int, pause: float, error: Exception) -> None:
        log.warning("import_retrying", lines=where, attempt=attempt, pause_seconds=pause, error=str(error))

    async def job(store: Store) -> tuple[Counts, dict[str, Any]]:
        async def with_index(index: VectorIndex | None) -> tuple[Counts, dict[str, Any]]:
            nonlocal importer
            if from_file:
                # A file is read twice: first to refuse, before anything is written, whatever the
                # import would refuse in it (a second export of a tenant, a repeated line, a cut,
                # a message that clashes with the target's).
                started = time.monotonic()
                checker = Importer(store, retrying=retrying, max_id_length=config.limits.max_id_length)
                checked = await checker.check(source)
                held = {name: getattr(checked, name) for name in ("sessions", "messages", "metadata", "vectors")}
                seconds = round(time.monotonic() - started, 2)
                log.info("import_checked", exports=checker.exports, **held, seconds=seconds)
                source.seek(0)
            importer = Importer(
                store, progress, vectors=index, retrying=retrying, max_id_length=config.limits.max_id_length
            )
            return await importer.run(lines()), importer.header or {}

        return await _with_index(config, args.vectors, with_index)

    try:
        counts, header = await _with_store(config, job)
    except TransferError as error:
        written = vars_of(importer.counts) if importer is not None else {}
        written = {name: value for name, value in written.items() if name.endswith("_written")}
        resume = {}
        if error.resumable:
            again = shlex.join(["memoryd", *sys.argv[1:]])
            resume["resume"] = again if from_file else f"the same export piped into `{again}` again"
        log.error("import_failed", error=str(error), **written, **resume)
        return 1
    finally:
        if from_file:
            source.close()
    exports = importer.exports if importer else 0
    progress.done(counts, exports=exports, version=header.get("version"), created=header.get("created"))
    return 0


async def reindex(args: argparse.Namespace, config: config_module.Config) -> int:
    """Index every stored message of the tenants again, remove the points of messages the store
    no longer holds, and bring each tenant's cursor up to its log (vectors/sync.py, run by the
    consumer runtime of consumers/runtime.py)."""
    from memoryd.vectors.setup import build_vectors

    if not config.vectors_enabled:
        log.error("reindex_failed", error="no vector store is configured")
        return 1

    async def job(store: Store) -> int:
        async def run_with(vectors: Any) -> int:
            runtime, indexer = vectors.runtime, vectors.indexer
            tenants = args.tenant or await runtime.tenant_logs()
            started = time.monotonic()
            last = [started]
            total = 0

            def progress(tenant: str, done: int, of: int) -> None:
                if time.monotonic() - last[0] >= PROGRESS_SECONDS:
                    last[0] = time.monotonic()
                    log.info(
                        "reindex_progress", tenant=tenant, **({"messages": done} if of < 0 else {"seq": done, "of": of})
                    )

            for tenant in tenants:
                indexer.progress = progress
                await runtime.reindex(tenant, indexer.name, progress)
                indexed = indexer.rebuilt.get(tenant, 0)
                total += indexed
                log.info(
                    "reindex_tenant_done",
                    tenant=tenant,
                    messages=indexed,
                    indexed_through_seq=vectors.positions.position(tenant),
                )
            seconds = max(time.monotonic() - started, 1e-9)
            log.info("reindex_done", tenants=len(tenants), messages=total, seconds=round(seconds, 2),
                     messages_per_second=round(total / seconds))  # fmt: skip
            return 0

        return await _opened(build_vectors(config, store, serving=False), run_with)

    return await _with_store(config, job)
