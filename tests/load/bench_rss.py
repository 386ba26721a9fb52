"""Server and vector-engine memory (RSS) around two bursts of large messages.

    .venv/bin/python tests/load/bench_rss.py      # defaults and keyword indexing off, ~6 min

For each configuration a fresh `memoryd serve` (SQLite, Qdrant Edge in its engine process,
defaults otherwise) is started; the RSS of the server process and of the engine process
(with any process it starts) are sampled every 20 ms from /proc:
  reads:  200 messages of 1 MiB in one session, then 3 concurrent GetFullHistory clients
          paging through it with page_size=1000;
  writes: 200 concurrent SaveMessage calls of 1 MiB each.
Before the reads, the seeded messages' background indexing is waited for (bounded), so the
baseline is a server at rest. It prints each process's RSS before, at the peak and
`--after-seconds` (30) after each burst, the keyword points indexed by then, and the RSS
once the burst's messages are all indexed ("drained", with the seconds that took): the
background indexing holds each message's text until the engine has it.
Configurations (`--configs`): `defaults`; `no-keywords` (`--index-message-keywords false`: the
keyword indexing of the saved messages is the rest of the write burst's cost);
`bounds-lifted` (`--max-response-bytes` and `--max-inflight-request-bytes` at 1 TiB: what
memoryd did before it had them). BENCH_EXTRA_ARGS adds flags to every configuration.
Results: docs/PERFORMANCE.md, "Memory under bursts of large messages".
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

from loadlib import RssSampler, _children, start_memoryd
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import memory_service_pb2_grpc, message_pb2, vector_service_pb2, vector_service_pb2_grpc

MIB = 1 << 20
UNBOUNDED = str(1 << 40)
SAMPLE_SECONDS = 0.02
CLIENT_OPTIONS = [("grpc.max_receive_message_length", 1 << 30), ("grpc.max_send_message_length", 64 * MIB)]
CONFIGS = {
    "defaults": [],
    "no-keywords": ["--index-message-keywords", "false"],
    "bounds-lifted": ["--max-response-bytes", UNBOUNDED, "--max-inflight-request-bytes", UNBOUNDED],
}
PROCESSES = ("server", "engine")
INDEXING_WAIT_SECONDS = 300


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return 0


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _tree(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        found.append(current := stack.pop())
        stack.extend(_children(current))
    return found


def _is_engine(command: str) -> bool:
    return "memoryd.engine" in command or "edge_process" in command  # engine.py, or edge_process.py


def process_rss(server_pid: int) -> dict[str, int]:
    """RSS of the server process alone and of its vector engine process with its descendants."""
    engines = [child for child in _children(server_pid) if _is_engine(_cmdline(child))]
    return {"server": _rss(server_pid), "engine": sum(_rss(pid) for engine in engines for pid in _tree(engine))}


class Sampler(RssSampler):
    """process_rss() every SAMPLE_SECONDS in a thread; `peaks`: the highest of each process."""

    def __init__(self, pid: int) -> None:
        super().__init__(pid, SAMPLE_SECONDS)
        self.peaks = dict.fromkeys(PROCESSES, 0)

    def _loop(self) -> None:
        while not self._stop.is_set():
            for name, rss in process_rss(self.pid).items():
                self.peaks[name] = max(self.peaks[name], rss)
            self._stop.wait(self.interval)


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


def indexing(target: str) -> tuple[int, int]:
    """(jobs the background indexing has queued, keyword points in the index); (0, 0) without vectors."""
    with grpc.insecure_channel(target) as channel:
        stub = vector_service_pb2_grpc.VectorServiceStub(channel)
        try:
            stats = stub.GetVectorStats(vector_service_pb2.GetVectorStatsRequest(), timeout=30)
        except grpc.RpcError:
            return 0, 0
        return stats.index_queue_length, stats.keyword_points


def wait_for_indexing(target: str, points: int) -> float:
    """Seconds until nothing is queued and `points` keyword points are in (bounded)."""
    start = time.monotonic()
    while time.monotonic() - start < INDEXING_WAIT_SECONDS:
        queued, indexed = indexing(target)
        if not queued and indexed >= points:
            break
        time.sleep(0.5)
    return time.monotonic() - start


def burst(pid: int, target: str, run, after_seconds: float, points: int, drained_settle: float) -> dict:
    """RSS before, at the peak and `after_seconds` after `run()`; then, once the background
    indexing has `points` keyword points, 'drained' (with the seconds that took)."""
    before = process_rss(pid)
    with Sampler(pid) as sampler:
        answered = run()
    time.sleep(after_seconds)
    after = process_rss(pid)
    queued, indexed = indexing(target)
    drain_seconds = after_seconds + wait_for_indexing(target, points)
    time.sleep(drained_settle)
    drained = process_rss(pid)
    result = {name: {"before": before[name] / MIB, "peak": sampler.peaks[name] / MIB, "after": after[name] / MIB,
                     "drained": drained[name] / MIB}
              for name in PROCESSES}
    result.update(index_queue_after=queued, keyword_points_after=indexed, keyword_points=points,
                  indexed_after_seconds=round(drain_seconds, 1))
    if answered is not None:
        result["messages"] = answered
    return result


def indexes_keywords(args: list[str]) -> bool:
    """Whether these flags leave the saved messages' keyword indexing on (the default)."""
    flag = "--index-message-keywords"
    return flag not in args or args[args.index(flag) + 1] != "false"


def measure(label: str, args: list[str], messages: int, readers: int, writers: int, settle: float, after: float,
            drained_settle: float) -> dict:
    keywords = indexes_keywords(args)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with start_memoryd("memoryd", work, work / "data", "--log-level", "warning", *args) as server:
            target, pid = server.target, server.pid
            asyncio.run(seed(target, messages))
            wait_for_indexing(target, messages if keywords else 0)
            time.sleep(settle)
            points = messages if keywords else 0
            reads = burst(pid, target, lambda: asyncio.run(read_burst(target, readers)), after, points, drained_settle)
            points += writers if keywords else 0
            writes = burst(pid, target, lambda: asyncio.run(write_burst(target, writers, "burst")), after, points,
                           drained_settle)
            return {"config": label, "args": args, "reads": reads, "writes": writes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--writers", type=int, default=200)
    parser.add_argument("--settle-seconds", type=float, default=10.0, help="rest before the first burst")
    parser.add_argument("--after-seconds", type=float, default=30.0, help="when 'after' is read")
    parser.add_argument("--drained-settle-seconds", type=float, default=5.0,
                        help="when 'drained' is read, after the burst's indexing is done")
    parser.add_argument("--configs", default="defaults,no-keywords", help=f"comma-separated, of {', '.join(CONFIGS)}")
    options = parser.parse_args()
    extra = os.environ.get("BENCH_EXTRA_ARGS", "").split()
    results = [
        measure(label, [*CONFIGS[label], *extra], options.messages, options.readers, options.writers,
                options.settle_seconds, options.after_seconds, options.drained_settle_seconds)
        for label in options.configs.split(",")
    ]
    print(f"{'config':<14} {'burst':<7} {'process':<7} {'before MB':>10} {'peak MB':>9} {'after MB':>9} "
          f"{'after/before':>13} {'indexed at after':>17} {'drained MB':>11} {'indexed after s':>16}")
    for result in results:
        for name in ("reads", "writes"):
            b = result[name]
            for process in PROCESSES:
                r = b[process]
                ratio = r["after"] / r["before"] if r["before"] else 0.0
                print(f"{result['config']:<14} {name:<7} {process:<7} {r['before']:>10.0f} {r['peak']:>9.0f} "
                      f"{r['after']:>9.0f} {ratio:>13.2f} {b['keyword_points_after']:>8}/{b['keyword_points']:<8} "
                      f"{r['drained']:>11.0f} {b['indexed_after_seconds']:>16.1f}")
    print(json.dumps(results))


if __name__ == "__main__":
    os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    main()
