"""The write path on the embedded default, in server CPU per write (less sensitive to a busy
machine than throughput, which it reports too):

    .venv/bin/python tests/load/bench_writes.py upserts   # vector_load.seed: 100,000 points
    .venv/bin/python tests/load/bench_writes.py saves     # 20,000 SaveMessage calls

`upserts`: a fresh `memoryd serve` (no index builds meanwhile, as the vector phase seeds)
saves the messages, then batched UpsertVectors (500 points of 384 dims per call, two tenants
at once, `text` set unless --no-text): points/s and server CPU µs per point over the upserts
(with `--probe`, also GetHistory's latency meanwhile: how long the event loop stalls).
`saves`: `--calls` SaveMessage calls (save_message.json's message, 1,000 sessions) from 16
concurrent clients, then waits until the background keyword indexing has drained: RPS and
server CPU µs per call including that indexing, keyword points made, the index lag left, RSS.
`--env NAME=VALUE` sets server settings (e.g. MEMORYD_INDEX_MESSAGE_KEYWORDS=false).
Prints one JSON line. Results: docs/PERFORMANCE.md, runs W and U.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time
from pathlib import Path

import grpc

import vector_load
from loadlib import SCENARIOS, start_memoryd, rss_bytes, tree_cpu_seconds, tree_rss_bytes
from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2
from memoryd.v1 import vector_service_pb2, vector_service_pb2_grpc

# save_message.json's message text, numbered as ghz numbers it.
SAVE_CONTENT = json.loads((SCENARIOS / "save_message.json").read_text())["data"]["message"]["content"].replace(
    "{{.RequestNumber}}", "{n}"
)


def upserts(server, points: int, with_text: bool, settle_seconds: float, probe: bool = False) -> dict:
    start_ts = int(time.time() * 1000) - 30 * 86_400_000
    tenants = list(vector_load.TENANTS)

    async def save_all():
        return await asyncio.gather(*(vector_load.save_sessions(server.target, t, points // 2, start_ts) for t in tenants))

    stored = asyncio.run(save_all())
    time.sleep(settle_seconds)  # the saves' background keyword indexing drains first: only upserts are measured
    cpu, started = tree_cpu_seconds(server.pid), time.monotonic()

    latencies: list[float] = []

    async def upsert_all():
        done = asyncio.Event()
        probing = asyncio.create_task(_probe(server.target, done, latencies)) if probe else None
        await asyncio.gather(*(
            vector_load.upsert_points(server.target, t, s, with_text=with_text) for t, s in zip(tenants, stored)
        ))
        done.set()
        if probing is not None:
            await probing

    asyncio.run(upsert_all())
    seconds, cpu = time.monotonic() - started, tree_cpu_seconds(server.pid) - cpu
    total = sum(len(s) for s in stored)
    return {"points": total, "text": with_text, "points_per_s": round(total / seconds),
            "cpu_us_per_point": round(cpu * 1e6 / total), **_percentiles("probe_ms", latencies)}


async def _probe(address: str, done: asyncio.Event, latencies: list[float]) -> None:
    """GetHistory(5) of an empty session every 2 ms while the upserts run: how long the
    server's event loop leaves other calls waiting."""
    metadata = (("authorization", f"Bearer {next(iter(vector_load.TENANTS.values()))}"),)
    async with grpc.aio.insecure_channel(address) as channel:
        memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        request = memory_service_pb2.GetHistoryRequest(session_id="probe", limit=5)
        while not done.is_set():
            started = time.perf_counter()
            await memory.GetHistory(request, metadata=metadata, timeout=60)
            latencies.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.002)


def _percentiles(name: str, values: list[float]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    at = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)  # noqa: E731
    return {f"{name}_p50": at(0.5), f"{name}_p99": at(0.99), f"{name}_max": round(ordered[-1], 1), f"{name}_n": len(ordered)}


async def _saves(address: str, calls: int) -> tuple[float, dict]:
    from google.protobuf import struct_pb2

    channels = [grpc.aio.insecure_channel(address) for _ in range(4)]
    numbers = iter(range(calls))

    async def client(n: int) -> None:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channels[n % 4])
        for number in numbers:
            metadata = struct_pb2.Struct()
            metadata.update({"platform": "load", "sender": {"id": f"user-{number % 97}"}})
            message = message_pb2.Message(role="user", content=SAVE_CONTENT.format(n=number), metadata=metadata)
            await stub.SaveMessage(memory_service_pb2.SaveMessageRequest(
                session_id=f"load-save-{random.randrange(1000)}", message=message), timeout=60)

    started = time.monotonic()
    await asyncio.gather(*(client(n) for n in range(16)))
    seconds = time.monotonic() - started
    stats_stub = vector_service_pb2_grpc.VectorServiceStub(channels[0])
    while (await stats_stub.GetVectorStats(vector_service_pb2.GetVectorStatsRequest())).index_queue_length:
        await asyncio.sleep(0.2)
    stats = await _settled_stats(stats_stub, calls)
    for channel in channels:
        await channel.close()
    return seconds, {"keyword_points": stats.keyword_points, "lag": stats.index_queue_length}


async def _settled_stats(stub, calls: int, *, quiet_seconds: float = 3.0, bound_seconds: float = 60.0):
    """The stats once the batches taken off the queue are written: every call's keyword point
    is there, or the count has not moved for `quiet_seconds` (keywords off), at most
    `bound_seconds` (a loaded machine takes longer than any fixed pause)."""
    stats = await stub.GetVectorStats(vector_service_pb2.GetVectorStatsRequest())
    now = time.monotonic()
    deadline, quiet_until = now + bound_seconds, now + quiet_seconds
    while stats.keyword_points < calls and time.monotonic() < min(deadline, quiet_until):
        await asyncio.sleep(0.2)
        latest = await stub.GetVectorStats(vector_service_pb2.GetVectorStatsRequest())
        if latest.keyword_points != stats.keyword_points:
            quiet_until = time.monotonic() + quiet_seconds
        stats = latest
    return stats


def saves(server, calls: int) -> dict:
    cpu = tree_cpu_seconds(server.pid)
    seconds, indexing = asyncio.run(_saves(server.target, calls))
    cpu = tree_cpu_seconds(server.pid) - cpu
    return {"calls": calls, "rps": round(calls / seconds), "cpu_us_per_call": round(cpu * 1e6 / calls), **indexing,
            "rss_mib": round(tree_rss_bytes(server.pid) / (1 << 20)), "serving_rss_mib": round(rss_bytes(server.pid) / (1 << 20))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["upserts", "saves"])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--no-text", action="store_true")
    parser.add_argument("--probe", action="store_true", help="upserts: also time GetHistory calls meanwhile")
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--settle-seconds", type=float, default=5.0)
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    env = {**vector_load.tokens_env(), "MEMORYD_VECTOR_REBUILD_THRESHOLD_KB": str(1 << 40)}
    env.update(item.split("=", 1) for item in args.env)
    if args.mode == "saves":
        env.pop("MEMORYD_TOKENS")  # the default tenant
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-writes-") as tmp:
        workdir = Path(tmp)
        with start_memoryd("memoryd-bench-writes", workdir, workdir / "data", env=env) as server:
            result = upserts(server, args.points, not args.no_text, args.settle_seconds, args.probe) if args.mode == "upserts" else saves(server, args.calls)
    print(json.dumps({"mode": args.mode, **result, "env": args.env, "load_average": round(os.getloadavg()[0], 1)}))


if __name__ == "__main__":
    main()
