"""Bulk import into the recall index, on the embedded default (no embedder):

    .venv/bin/python tests/load/bench_import.py import   # 100,000 messages, SaveMessages of 1,000
    .venv/bin/python tests/load/bench_import.py saves    # SaveMessage RPS, keyword indexing on vs off

`import`: a fresh `memoryd serve`; `--messages` messages through SaveMessages calls of
`--batch` (4 concurrent clients, 100 sessions) as fast as the server takes them; then waits
until the index synchronizer has applied the whole log (GetVectorStats: indexed_through_seq ==
event_seq). Reports the saves' rate, the indexing rate (messages / time from the first save
until the index held them all), the wait after the last save, and (the server stopped) the
set of message ids in the index against the set in the store: missing and orphans, both 0.
`saves`: bench_writes.py's `saves` twice in one run, keyword indexing on and off
(`MEMORYD_INDEX_MESSAGE_KEYWORDS=false`): RPS, server CPU per call and RSS of each (the
process tree, and the serving process alone), and the ratios.
Prints one JSON line. Results: docs/PERFORMANCE.md, run Y.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

import grpc

import bench_writes
from loadlib import start_memoryd, tree_cpu_seconds, tree_rss_bytes
from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2
from memoryd.v1 import vector_service_pb2, vector_service_pb2_grpc

CLIENTS = 4
SESSIONS = 100
POLL_SHARE = 10  # waits between GetVectorStats polls: this many times the last one took


async def _import(address: str, messages: int, batch: int, timeout: float) -> dict:
    channel = grpc.aio.insecure_channel(address)
    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
    vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
    calls = iter(range((messages + batch - 1) // batch))

    async def client() -> None:
        for call in calls:
            first = call * batch
            request = memory_service_pb2.SaveMessagesRequest(
                session_id=f"import-{call % SESSIONS}",
                messages=[
                    message_pb2.Message(role="user" if n % 2 == 0 else "assistant", content=f"message {n} about topic{n % 997}")
                    for n in range(first, min(first + batch, messages))
                ],
            )
            await memory.SaveMessages(request, timeout=120)

    started = time.monotonic()
    await asyncio.gather(*(client() for _ in range(CLIENTS)))
    saved = time.monotonic()
    while True:
        asked = time.monotonic()
        stats = await vectors.GetVectorStats(vector_service_pb2.GetVectorStatsRequest(), timeout=60)
        if stats.indexed_through_seq == stats.event_seq and stats.keyword_points >= messages:
            break
        if time.monotonic() - saved > timeout:
            break
        # GetVectorStats counts the points exactly (~40 ms at 100,000, on the engine's loop):
        # asked every 50 ms it took a third of the synchronizer's time. At most a tenth now.
        await asyncio.sleep(max(0.05, POLL_SHARE * (time.monotonic() - asked)))
    indexed = time.monotonic()
    await channel.close()
    return {
        "messages": messages, "batch": batch, "saves_msgs_per_s": round(messages / (saved - started)),
        "index_msgs_per_s": round(messages / (indexed - started)), "seconds_after_last_save": round(indexed - saved, 2),
        "keyword_points": stats.keyword_points, "lag": stats.event_seq - stats.indexed_through_seq,
    }


async def _difference(data_dir: Path) -> dict:
    """Index vs store by message id, the server stopped (Edge is one process)."""
    from memoryd.storage.qdrant.edge import EdgeIndex
    from memoryd.storage.sqlite.store import SqliteStore
    from memoryd.vectors.sync import RecallIndexer
    from tests.vectors.index_state import difference

    store, index = SqliteStore(data_dir / "memoryd.db"), EdgeIndex(data_dir / "vectors")
    await store.open()
    await index.open()
    try:
        diff = await difference(RecallIndexer(store, index), "default")
        return {"missing": len(diff.missing), "orphans": len(diff.orphans)}
    finally:
        await index.close()
        await store.close()


def import_(messages: int, batch: int, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-import-") as tmp:
        workdir = Path(tmp)
        with start_memoryd("memoryd-bench-import", workdir, workdir / "data") as server:
            cpu = tree_cpu_seconds(server.pid)
            result = asyncio.run(_import(server.target, messages, batch, timeout))
            result["cpu_us_per_message"] = round((tree_cpu_seconds(server.pid) - cpu) * 1e6 / messages)
            result["rss_mib"] = round(tree_rss_bytes(server.pid) / (1 << 20))
        return {**result, **asyncio.run(_difference(workdir / "data"))}


def saves(calls: int) -> dict:
    runs = {}
    for name, env in (("on", {}), ("off", {"MEMORYD_INDEX_MESSAGE_KEYWORDS": "false"})):
        with tempfile.TemporaryDirectory(prefix="memoryd-bench-import-") as tmp:
            workdir = Path(tmp)
            with start_memoryd("memoryd-bench-saves", workdir, workdir / "data", env=env) as server:
                runs[name] = bench_writes.saves(server, calls)
    on, off = runs["on"], runs["off"]
    return {"keywords_on": on, "keywords_off": off, "rps_ratio": round(on["rps"] / off["rps"], 3),
            "rss_ratio": round(on["rss_mib"] / off["rss_mib"], 3),
            "serving_rss_ratio": round(on["serving_rss_mib"] / off["serving_rss_mib"], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["import", "saves"])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--timeout", type=float, default=600.0, help="import: longest wait for the index after the saves")
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    result = import_(args.messages, args.batch, args.timeout) if args.mode == "import" else saves(args.calls)
    print(json.dumps({"mode": args.mode, **result, "load_average": round(os.getloadavg()[0], 1)}))


if __name__ == "__main__":
    main()
