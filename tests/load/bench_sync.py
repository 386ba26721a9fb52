"""The recall index's log consumer at work, in one process (no server): a SQLite store seeded
with `--messages` messages (SaveMessages-like appends of `--batch`, over `--sessions`), then a
consumer runtime running one RecallIndexer over it and a fresh Edge index applies the whole
log. Prints one JSON line: the indexing rate (messages/s of `Runtime.apply_all`) and, with
`--profile FILE`, a cProfile of it.

    .venv/bin/python tests/load/bench_sync.py --messages 100000
    .venv/bin/python tests/load/bench_sync.py --messages 5000 --batch 1 --sessions 1000 --events 150 --metadata
        # what SaveMessage traffic gives the engine's synchronizer: passes of single messages
        # over many sessions, each with the load suite's platform and sender metadata
    .venv/bin/python tests/load/bench_sync.py --messages 100000 --rebuild --check
        # then the format change of issue 43: every keyword point rewritten as the release
        # before wrote it (the text in its payload, no hash) under a cursor of that release's
        # fingerprint ("v1;..."), and a new runtime's rebuild of the tenant from the store timed
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import sys
import tempfile
import time
from pathlib import Path

from memoryd.storage.qdrant.edge import EdgeIndex
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.v1 import message_pb2
from memoryd.consumers.runtime import Runtime
from memoryd.domain.models import SYSTEM_TENANT, now_ms
from memoryd.domain.vectors import KeywordPoint, VectorRecord
from memoryd.vectors.sync import CURSOR_NAMESPACE, RecallIndexer, stored_pages
from memoryd.wire import dict_to_struct, message_from_pb

def _content(n: int, text_bytes: int) -> str:
    """Message n's text: a few distinct words, padded with more to `text_bytes` (0: unpadded)."""
    text = f"message {n} about topic{n % 997}"
    word = 0
    while len(text) < text_bytes:
        text += f" word{(n * 31 + word) % 4096}"
        word += 1
    return text


async def _seed(
    store: SqliteStore, messages: int, batch: int, sessions: int, metadata: bool, text_bytes: int = 0
) -> None:
    for call in range((messages + batch - 1) // batch):
        first = call * batch
        pbs = [
            message_pb2.Message(role="user" if n % 2 == 0 else "assistant", content=_content(n, text_bytes))
            for n in range(first, min(first + batch, messages))
        ]
        if metadata:
            for n, pb in enumerate(pbs, first):
                dict_to_struct({"platform": "load", "sender": {"id": f"user-{n % 97}"}}, pb.metadata)
        await store.append("default", f"import-{call % sessions}", [message_from_pb(pb) for pb in pbs], None, int(time.time() * 1000))


def _timed(obj, *names: str) -> dict[str, list[float]]:
    """Wall time spent in `obj`'s methods `names` (awaited), per name."""
    spent: dict[str, list[float]] = {}
    for name in names:
        method, times = getattr(obj, name), spent.setdefault(name, [])

        async def timed(*args, _method=method, _times=times, **kwargs):
            started = time.monotonic()
            try:
                return await _method(*args, **kwargs)
            finally:
                _times.append(time.monotonic() - started)

        setattr(obj, name, timed)
    return spent


async def _run(args: argparse.Namespace, folder: Path) -> dict:
    store = SqliteStore(folder / "memoryd.db")
    index = EdgeIndex(folder / "vectors", reads_on_loop=True)  # as in the engine process
    await store.open()
    await index.open()
    try:
        await _seed(store, args.messages, args.batch, args.sessions, args.metadata, args.text_bytes)
        indexer = RecallIndexer(store, index, batch=args.events)
        runtime = Runtime(store, [indexer])
        timings = _timed(store, "messages_by_seq", "read_events") | _timed(index, "_upsert_keywords")
        profile = cProfile.Profile() if args.profile else None
        started, cpu, loop_cpu = time.monotonic(), time.process_time(), time.thread_time()
        written = _written()
        if profile:
            profile.enable()
        await runtime.apply_all()
        if profile:
            profile.disable()
            profile.dump_stats(args.profile)
        seconds, cpu, loop_cpu = time.monotonic() - started, time.process_time() - cpu, time.thread_time() - loop_cpu
        written = _written() - written
        result = {
            # What the process wrote while indexing (the engine's WAL, operation log and
            # segments; the cursors' SQLite writes), per message, and the index's files.
            "written_bytes_per_message": round(written / args.messages),
            "index_folder_bytes": _folder_bytes(folder / "vectors"),
            "messages": args.messages, "seconds": round(seconds, 2), "index_msgs_per_s": round(args.messages / seconds),
            "cpu_us_per_message": round(cpu * 1e6 / args.messages),
            "loop_cpu_us_per_message": round(loop_cpu * 1e6 / args.messages),  # the rest: Edge's and SQLite's threads
        }  # fmt: skip
        result["seconds_in"] = {name: round(sum(t), 2) for name, t in timings.items()}
        counted = time.monotonic()
        await index.stats("default")  # what GetVectorStats asks the engine (bench_import.py polls it)
        result["stats_ms"] = round((time.monotonic() - counted) * 1000, 1)
        if args.rebuild:
            await runtime.flush_cursors()
            result["rebuild"] = await _rebuild(store, index, args)
            indexer = RecallIndexer(store, index, batch=args.events)
        if args.check:
            sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's tests package
            from tests.vectors.index_state import difference

            diff = await difference(indexer, "default")
            result |= {"missing": len(diff.missing), "orphans": len(diff.orphans)}
        return result
    finally:
        await index.close()
        await store.close()


async def _rebuild(store: SqliteStore, index: EdgeIndex, args: argparse.Namespace) -> dict:
    """The tenant's keyword points as the release before wrote them (text, no hash) under a
    cursor of its fingerprint; then a new runtime's pass, which rebuilds the tenant, timed."""
    async with store.snapshot() as view:
        async for session_id, messages in stored_pages(view, "default", 1000):
            old = [
                KeywordPoint("default", VectorRecord(session_id, m.timestamp, None, m.id, m.role, text=m.content))
                for m in messages
            ]
            await index.upsert_keywords(old, now_ms())
    entry = await store.get_metadata(SYSTEM_TENANT, CURSOR_NAMESPACE, "default")
    assert entry is not None
    fingerprint = "v1;" + entry.data["fingerprint"].split(";", 1)[1]
    data = {**entry.data, "fingerprint": fingerprint}
    await store.save_metadata(SYSTEM_TENANT, CURSOR_NAMESPACE, "default", data, now_ms())
    indexer = RecallIndexer(store, index, batch=args.events)
    runtime = Runtime(store, [indexer])
    started, cpu = time.monotonic(), time.process_time()
    await runtime.apply_all()
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu
    assert indexer.rebuilt == {"default": args.messages}, indexer.rebuilt
    return {
        "seconds": round(seconds, 2), "msgs_per_s": round(args.messages / seconds),
        "cpu_us_per_message": round(cpu * 1e6 / args.messages),
        "seconds_per_1m_messages": round(seconds * 1_000_000 / args.messages),
    }  # fmt: skip


def _written() -> int:
    """Bytes this process has written (dirtied page-cache pages included: /proc/self/io)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


def _folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_blocks * 512 for f in folder.rglob("*") if f.is_file())  # allocated, not preallocated sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--events", type=int, default=500, help="RecallIndexer's batch (events)")
    parser.add_argument("--sessions", type=int, default=100, help="the appends go round these sessions")
    parser.add_argument("--metadata", action="store_true", help="each message with the load suite's platform and sender")
    parser.add_argument("--text-bytes", type=int, default=0, help="pad each message's text to this many bytes")
    parser.add_argument("--profile", default="")
    parser.add_argument("--check", action="store_true", help="index vs store by message id afterwards")
    parser.add_argument("--rebuild", action="store_true", help="then time the rebuild of the points' format change")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-sync-") as tmp:
        print(json.dumps(asyncio.run(_run(args, Path(tmp)))))


if __name__ == "__main__":
    main()
