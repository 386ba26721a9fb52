"""How long the console's timeline takes to open on a long session: the server time of the
four calls its first page makes (GetSession, GetFullHistory of one page, GetSummaryCursor,
ListSummaries), and of following its "Next page" link a few times (the page token), after
seeding one session with N messages over gRPC (SaveMessages, 1000 a call; vectors off).

    .venv/bin/python -m tests.console.bench_timeline --messages 1000000 --data-dir /tmp/x

Prints one JSON line. Timings are the client's round trips on loopback (HTTP/JSON), which
bound the server's time from above.
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

SESSION = "long"
BATCH = 1000


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    app = await start(Config(listen="127.0.0.1:0", data_dir=args.data_dir, vectors_enabled=False, log_level="warning"))
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
            stub = mem_grpc.MemoryServiceStub(channel)
            held = (await stub.GetSession(mem.GetSessionRequest(session_id=SESSION))).session.message_count
            started = time.perf_counter()
            for first in range(held, args.messages, BATCH):
                messages = [
                    message_pb2.Message(
                        role="user" if i % 2 else "assistant",
                        content=f"message {i} 長い会話 🚀",
                        timestamp=1_700_000_000_000 + i,
                    )
                    for i in range(first, min(first + BATCH, args.messages))
                ]
                await stub.SaveMessages(mem.SaveMessagesRequest(session_id=SESSION, messages=messages))
            seeded_s = time.perf_counter() - started
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=120) as http:

            async def timed(rpc: str, body: dict) -> tuple[float, dict]:
                begin = time.perf_counter()
                response = await http.post(f"/memoryd.v1.{rpc}", json=body)
                assert response.status_code == 200, response.text
                return time.perf_counter() - begin, response.json()

            opens, nexts = [], []
            for _ in range(args.repeats):
                begin = time.perf_counter()
                answers = await asyncio.gather(
                    timed("MemoryService/GetSession", {"session_id": SESSION}),
                    timed("MemoryService/GetFullHistory", {"session_id": SESSION, "page_size": 100}),
                    timed("SummaryService/GetSummaryCursor", {"session_id": SESSION}),
                    timed("SummaryService/ListSummaries", {"session_id": SESSION, "page_size": 100}),
                )
                opens.append(time.perf_counter() - begin)
                token = answers[1][1]["next_page_token"]
                for _ in range(3):
                    took, page = await timed(
                        "MemoryService/GetFullHistory", {"session_id": SESSION, "page_size": 100, "page_token": token}
                    )
                    nexts.append(took)
                    token = page["next_page_token"]
            count = answers[0][1]["session"]["message_count"]
        print(
            json.dumps(
                {
                    "messages": int(count),
                    "seeded_s": round(seeded_s, 1),
                    "open_ms_median": round(statistics.median(opens) * 1000, 1),
                    "open_ms_max": round(max(opens) * 1000, 1),
                    "next_page_ms_median": round(statistics.median(nexts) * 1000, 1),
                    "next_page_ms_max": round(max(nexts) * 1000, 1),
                }
            )
        )
    finally:
        await app.stop(0)


if __name__ == "__main__":
    asyncio.run(main())
