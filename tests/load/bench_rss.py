"""Server memory (RSS) under the two bursts of large messages that once took it past 1.6 GB.

    .venv/bin/python tests/load/bench_rss.py            # both bursts, bounded and unbounded

For each configuration a fresh `memoryd serve` (SQLite, defaults otherwise) is started and
its RSS (with any child process) sampled every 20 ms from /proc:
  reads:  200 messages of 1 MiB in one session, then 3 concurrent GetFullHistory clients
          paging through it with page_size=1000;
  writes: 200 concurrent SaveMessage calls of 1 MiB each.
It prints RSS before, at the peak and 5 s after each burst, for the defaults
(max_response_bytes 3 MiB, max_inflight_request_bytes 16 MiB; BENCH_EXTRA_ARGS adds flags)
and, in the same run, with both bounds lifted (what memoryd did before it had them), so the
result is a ratio. Results: docs/PERFORMANCE.md, "Memory under bursts of large messages".
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

from loadlib import RssSampler, start_memoryd, tree_rss_bytes
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc, message_pb2

MIB = 1 << 20
UNBOUNDED = str(1 << 40)
SAMPLE_SECONDS = 0.02
CLIENT_OPTIONS = [("grpc.max_receive_message_length", 1 << 30), ("grpc.max_send_message_length", 64 * MIB)]


def rss_mb(pid: int) -> float:
    return tree_rss_bytes(pid) / MIB


def big_message(i: int) -> message_pb2.Message:
    return message_pb2.Message(role="user", content=f"{i:06d}" + "x" * (MIB - 64), timestamp=1000 + i)


async def read_burst(target: str, readers: int) -> int:
    async with grpc.aio.insecure_channel(target, options=CLIENT_OPTIONS) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)

        async def read_all() -> int:
            count, token = 0, ""
            while True:
                page = await stub.GetFullHistory(
                    mem.GetFullHistoryRequest(session_id="big", page_size=1000, page_token=token), timeout=300
                )
                count += len(page.messages)
                token = page.next_page_token
                if not token:
                    return count

        return sum(await asyncio.gather(*(read_all() for _ in range(readers))))


async def write_burst(target: str, writers: int, session: str) -> None:
    async with grpc.aio.insecure_channel(target, options=CLIENT_OPTIONS) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        await asyncio.gather(*(
            stub.SaveMessage(mem.SaveMessageRequest(session_id=session, message=big_message(i)), timeout=300)
            for i in range(writers)
        ))


async def seed(target: str, count: int) -> None:
    async with grpc.aio.insecure_channel(target, options=CLIENT_OPTIONS) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)
        for i in range(count):
            await stub.SaveMessage(mem.SaveMessageRequest(session_id="big", message=big_message(i)), timeout=60)


def measure(label: str, args: list[str], messages: int, readers: int, writers: int, settle: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with start_memoryd("memoryd", work, work / "data", "--log-level", "warning", *args) as server:
            target, pid = server.target, server.pid
            asyncio.run(seed(target, messages))
            time.sleep(settle)
            result = {"config": label}
            before = rss_mb(pid)
            with RssSampler(pid, SAMPLE_SECONDS) as sampler:
                read = asyncio.run(read_burst(target, readers))
            time.sleep(settle)
            result["reads"] = {"before": before, "peak": sampler.peak / MIB, "after": rss_mb(pid), "messages": read}
            before = rss_mb(pid)
            with RssSampler(pid, SAMPLE_SECONDS) as sampler:
                asyncio.run(write_burst(target, writers, "burst"))
            time.sleep(settle)
            result["writes"] = {"before": before, "peak": sampler.peak / MIB, "after": rss_mb(pid)}
            return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--writers", type=int, default=200)
    parser.add_argument("--settle-seconds", type=float, default=5.0)
    options = parser.parse_args()
    extra = os.environ.get("BENCH_EXTRA_ARGS", "").split()
    configs = [
        ("defaults", extra),
        ("bounds lifted", ["--max-response-bytes", UNBOUNDED, "--max-inflight-request-bytes", UNBOUNDED]),
    ]
    results = [measure(label, args, options.messages, options.readers, options.writers, options.settle_seconds)
               for label, args in configs]
    print(f"{'config':<14} {'burst':<7} {'before MB':>10} {'peak MB':>9} {'after MB':>9}")
    for result in results:
        for burst in ("reads", "writes"):
            r = result[burst]
            print(f"{result['config']:<14} {burst:<7} {r['before']:>10.0f} {r['peak']:>9.0f} {r['after']:>9.0f}")
    bounded, lifted = results
    for burst in ("reads", "writes"):
        growth = [r[burst]["peak"] - r[burst]["before"] for r in results]
        print(f"{burst}: peak growth with bounds / without = {growth[0] / max(growth[1], 1):.2f}")
    print(json.dumps(results))


if __name__ == "__main__":
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    main()
