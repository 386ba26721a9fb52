"""SearchMemory on MongoDB (SecantusDB, the MongoDB-wire test server) against SQLite, at top_k
1 to 50, with the conversation lift on (the default neighbor_weight) and, for reference, off.

Two `memoryd serve` processes, one per store, both with the embedded vector engine and no
embedder (the searches are by text: keyword recall, whose hits get the same lift and context
windows as vector hits); each is seeded with the same `--sessions` x `--messages` messages.
Every search asks for `--context` messages around each hit. Per top_k and backend: the median
and p90 latency over `--searches` calls, made one after another (no concurrency), MongoDB and
SQLite alternating so a busy machine's drift meets both alike; a call the server answers
UNAVAILABLE (its store budget, `--mongodb-timeout-ms` 5 s, ran out) is counted, not timed.

    .venv/bin/python tests/load/bench_search_backends.py [--sessions 50] [--messages 100] [--searches 30]

`--server-path DIR` runs both servers on another checkout's server/ (PYTHONPATH), for before/after.

Prints one JSON object on stdout (the last line): per top_k, each backend's median/p90 ms and
MongoDB's median over SQLite's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memoryd.v1 import memory_service_pb2 as mem  # noqa: E402
from memoryd.v1 import (  # noqa: E402
    memory_service_pb2_grpc,
    message_pb2,
    vector_service_pb2_grpc,  # noqa: E402
)
from memoryd.v1 import vector_service_pb2 as vpb  # noqa: E402
from tests.conftest import SecantusServer  # noqa: E402
from tests.processes import MemorydServer  # noqa: E402

WORDS = "apple river mountain coffee garden planet violin harbor lantern meadow".split()
TOP_KS = (1, 5, 10, 20, 50)


async def seed(target: str, sessions: int, messages: int) -> int:
    last = 0
    async with grpc.aio.insecure_channel(target) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        for s in range(sessions):
            batch = [
                message_pb2.Message(
                    role="user" if i % 2 == 0 else "assistant",
                    content=f"{WORDS[(s + i) % len(WORDS)]} {WORDS[(s * 3 + i) % len(WORDS)]} note {s}-{i}",
                    timestamp=1_700_000_000_000 + s * 1_000_000 + i * 1000,
                )
                for i in range(messages)
            ]
            reply = await stub.SaveMessages(mem.SaveMessagesRequest(session_id=f"s{s}", messages=batch), timeout=60)
            last = max(last, reply.event_seq)
    return last


async def search_ms(stub, top_k: int, context: int, neighbor_weight: float | None) -> float | None:
    request = vpb.SearchMemoryRequest(query_text="apple river", top_k=top_k, context_window=context)
    if neighbor_weight is not None:
        request.neighbor_weight = neighbor_weight
    started = time.perf_counter()
    try:
        await stub.SearchMemory(request, timeout=30)
    except grpc.aio.AioRpcError as exc:  # the store's budget ran out: counted, not timed
        if exc.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise
        return None
    return (time.perf_counter() - started) * 1000


async def run(args: argparse.Namespace, workdir: Path) -> dict:
    secantus = SecantusServer(workdir / "secantus")
    secantus.start()
    env = {"PYTHONPATH": str(Path(args.server_path).resolve())} if args.server_path else None
    servers = {
        "sqlite": MemorydServer(workdir / "sqlite", env=env),
        "mongodb": MemorydServer(
            workdir / "mongodb",
            "--mongodb-uri",
            secantus.uri,
            "--mongodb-database",
            f"bench_{uuid.uuid4().hex[:8]}",
            env=env,
        ),
    }
    try:
        for server in servers.values():
            server.start()
        channels = {name: grpc.aio.insecure_channel(s.target) for name, s in servers.items()}
        stubs = {name: vector_service_pb2_grpc.VectorServiceStub(c) for name, c in channels.items()}
        for name, server in servers.items():
            seq = await seed(server.target, args.sessions, args.messages)
            # Lift off, one hit: this call only waits for the index to hold every message (a
            # store too slow for even that answers UNAVAILABLE once the index is there).
            wait = vpb.SearchMemoryRequest(query_text="apple", top_k=1, wait_for_event_seq=seq, neighbor_weight=0.0)
            for _ in range(10):
                try:
                    await stubs[name].SearchMemory(wait, timeout=300)
                    break
                except grpc.aio.AioRpcError as exc:
                    if exc.code() != grpc.StatusCode.UNAVAILABLE:
                        raise
        rows = {}
        for lift, weight in (("lift", None), ("no_lift", 0.0)):
            for top_k in TOP_KS:
                times: dict[str, list[float]] = {name: [] for name in servers}
                failed = dict.fromkeys(servers, 0)
                for _ in range(args.searches):
                    for name in servers:
                        ms = await search_ms(stubs[name], top_k, args.context, weight)
                        if ms is None:
                            failed[name] += 1
                        else:
                            times[name].append(ms)
                row: dict = {}
                for name, values in times.items():
                    values.sort()
                    row[name] = {
                        "median_ms": round(statistics.median(values), 1) if values else None,
                        "p90_ms": round(values[int(0.9 * (len(values) - 1))], 1) if values else None,
                        "unavailable": failed[name],
                    }
                medians = row["mongodb"]["median_ms"], row["sqlite"]["median_ms"]
                row["mongodb_over_sqlite"] = round(medians[0] / medians[1], 2) if None not in medians else None
                rows[f"{lift}_top{top_k}"] = row
                print(json.dumps({f"{lift}_top{top_k}": row}), file=sys.stderr, flush=True)
        for channel in channels.values():
            await channel.close()
    finally:
        for server in servers.values():
            server.stop()
        secantus.stop()
    return {
        "sessions": args.sessions,
        "messages": args.messages,
        "context": args.context,
        "searches": args.searches,
        **rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--searches", type=int, default=30)
    parser.add_argument("--context", type=int, default=2)
    parser.add_argument("--server-path", help="a checkout's server/ directory to run both servers from (before/after)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-search-backends-") as tmp:
        print(json.dumps(asyncio.run(run(args, Path(tmp)))), flush=True)


if __name__ == "__main__":
    main()
