"""What the console's sessions list and operations view cost on a tenant with many sessions:
the server time of GetMemoryStats (it adds up every session record of the tenant) and of
ListSessions' first page unfiltered, with a wide time range and with a narrow one (the
newest 1% of the sessions, written last and last in session id order: the page walks past
the other 99%), after seeding N sessions of one message each over gRPC (vectors off).

    .venv/bin/python -m tests.console.bench_sessions --sessions 50000 --data-dir /tmp/x

Prints one JSON line. Timings are the client's round trips on loopback (HTTP/JSON), which
bound the server's time from above; medians of --repeats.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

import grpc
import httpx

from memoryd.app import start
from memoryd.config import Config
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc as mem_grpc
from memoryd.v1 import message_pb2

CONCURRENCY = 32


async def seed(stub, first: int, last: int) -> None:
    async def one(i: int) -> None:
        message = message_pb2.Message(role="user", content=f"session {i} 会話", timestamp=1_700_000_000_000 + i)
        await stub.SaveMessages(mem.SaveMessagesRequest(session_id=f"s{i:07d}", messages=[message]))

    for start_at in range(first, last, CONCURRENCY):
        await asyncio.gather(*(one(i) for i in range(start_at, min(start_at + CONCURRENCY, last))))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=50_000)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    app = await start(Config(listen="127.0.0.1:0", data_dir=args.data_dir, vectors_enabled=False, log_level="warning"))
    try:
        newest = args.sessions - max(1, args.sessions // 100)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
            stub = mem_grpc.MemoryServiceStub(channel)
            started = time.perf_counter()
            await seed(stub, 0, newest)
            await asyncio.sleep(0.01)
            cut = int(time.time() * 1000) + 1  # after every older session's last write
            await asyncio.sleep(0.01)
            await seed(stub, newest, args.sessions)
            seeded_s = time.perf_counter() - started
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=120) as http:

            async def timed(rpc: str, body: dict) -> tuple[float, dict]:
                begin = time.perf_counter()
                response = await http.post(f"/memoryd.v1.{rpc}", json=body)
                elapsed = (time.perf_counter() - begin) * 1000
                assert response.status_code == 200, response.text
                return elapsed, response.json()

            async def median(rpc: str, body: dict, check) -> float:
                times = []
                for _ in range(args.repeats):
                    elapsed, answer = await timed(rpc, body)
                    check(answer)
                    times.append(elapsed)
                return round(statistics.median(times), 1)

            def sessions_are(n: int):
                return lambda answer: assert_(int(answer["sessions"]) == n, answer)

            def page_of(n: int):
                return lambda answer: assert_(len(answer.get("sessions", [])) == n, len(answer.get("sessions", [])))

            result = {
                "sessions": args.sessions,
                "seeded_s": round(seeded_s, 1),
                "get_memory_stats_ms": await median("MemoryService/GetMemoryStats", {}, sessions_are(args.sessions)),
                "list_first_page_ms": await median("MemoryService/ListSessions", {"page_size": 50}, page_of(50)),
                "list_wide_range_first_page_ms": await median(
                    "MemoryService/ListSessions", {"page_size": 50, "active_since": "0"}, page_of(50)
                ),
                "list_newest_1pct_first_page_ms": await median(
                    "MemoryService/ListSessions",
                    {"page_size": 50, "active_since": str(cut)},
                    page_of(min(50, args.sessions - newest)),
                ),
                "list_none_in_range_ms": await median(
                    "MemoryService/ListSessions", {"page_size": 50, "active_since": str(cut + 10**9)}, page_of(0)
                ),
            }
        print(json.dumps(result))
    finally:
        await app.stop(0)


def assert_(condition: bool, detail) -> None:
    if not condition:
        raise AssertionError(detail)


if __name__ == "__main__":
    asyncio.run(main())
