"""Benchmark of Watch fan-out (not a test): delivery latency p50/p99 and throughput with N subscribers.

Starts `memoryd serve` in its own process (SQLite by default, or --mongodb-uri), opens N
subscribers that watch messages-appended, then runs two phases:

- latency: SaveMessage at a fixed rate; latency = arrival at a subscriber minus the moment
  the write was issued (so it includes the write itself), over every (subscriber, event);
- throughput: W concurrent writers as fast as they go; deliveries per second across all
  subscribers, and a check that every subscriber got every event exactly once.

    .venv/bin/python tests/events/bench_watch.py --subscribers 100
    .venv/bin/python tests/events/bench_watch.py --subscribers 100 --mongodb-uri 'mongodb://127.0.0.1:27017/?replicaSet=rs0'

Client and server share the machine: on small machines the subscribers' own parsing is
part of what is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc

if __package__ is None or __package__ == "":  # run as a script: the repository's tests package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memoryd.v1 import event_pb2, event_service_pb2, event_service_pb2_grpc
from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2
from tests.processes import ServerProcess

SESSION = "bench"


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))] if ordered else 0.0


def serve(
    data_dir: Path, *flags: str, python_flags: str = "", preexec_fn: Callable[[], None] | None = None
) -> tuple[ServerProcess, int]:
    """`memoryd serve` on `data_dir` in its own process; returns the process and its port."""
    command = [
        sys.executable, *python_flags.split(), "-m", "memoryd", "serve", "--listen", "127.0.0.1:0",
        "--data-dir", str(data_dir), "--log-level", "warning", *flags,
    ]  # fmt: skip
    server = ServerProcess(command, data_dir, preexec_fn=preexec_fn)
    return server, server.start()


def start_server(args: argparse.Namespace, data_dir: Path) -> tuple[ServerProcess, int]:
    mongo = ["--mongodb-uri", args.mongodb_uri, "--mongodb-database", f"bench_{uuid.uuid4().hex[:8]}"]
    return serve(data_dir, *(mongo if args.mongodb_uri else []), python_flags=args.python_flags)


class Subscriber:
    def __init__(self, stub: event_service_pb2_grpc.EventServiceStub) -> None:
        self.call = stub.Watch(
            event_service_pb2.WatchRequest(session_ids=[SESSION], types=[event_pb2.EVENT_TYPE_MESSAGES_APPENDED])
        )
        self.arrivals: dict[int, float] = {}  # message timestamp (the write's tag) -> arrival
        self.seqs: list[int] = []
        self.error = ""

    async def run(self) -> None:
        try:
            async for response in self.call:
                if response.HasField("event"):
                    now = time.perf_counter()
                    self.seqs.append(response.event.seq)
                    for ref in response.event.messages_appended.messages:
                        self.arrivals[ref.timestamp] = now
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                self.error = error.code().name


async def wait_delivered(subscribers: list[Subscriber], tags: list[int], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(tag in s.arrivals for s in subscribers for tag in tags[-1:]):
            return True
        await asyncio.sleep(0.02)
    return False


class Writer:
    """SaveMessage calls tagged by their message timestamp, with when each was issued and acknowledged."""

    def __init__(self, memory: memory_service_pb2_grpc.MemoryServiceStub) -> None:
        self.memory = memory
        self.tags = itertools.count(1_000_000_000_000)  # message timestamps double as write tags
        self.issued: dict[int, float] = {}
        self.acked: dict[int, float] = {}

    async def write(self, tag: int | None = None) -> None:
        tag = next(self.tags) if tag is None else tag
        self.issued[tag] = time.perf_counter()
        message = message_pb2.Message(role="user", content=f"message {tag}", timestamp=tag)
        await self.memory.SaveMessage(memory_service_pb2.SaveMessageRequest(session_id=SESSION, message=message))
        self.acked[tag] = time.perf_counter()


async def paced_latencies(
    writer: Writer, subscribers: list[Subscriber], rate: float, duration: float
) -> tuple[list[float], int, list[float]]:
    """Writes at `rate` for `duration` seconds; returns the delivery latencies in ms over every
    (subscriber, write), the deliveries missing, and the writes' own latencies in ms."""
    tags: list[int] = []
    paced: list[asyncio.Task] = []
    interval = 1 / rate
    started = time.perf_counter()
    for i in range(int(rate * duration)):
        await asyncio.sleep(max(0.0, started + i * interval - time.perf_counter()))
        tags.append(next(writer.tags))
        paced.append(asyncio.create_task(writer.write(tags[-1])))
    await asyncio.gather(*paced)
    await wait_delivered(subscribers, tags, 60)
    latencies = [
        (s.arrivals[tag] - writer.issued[tag]) * 1000 for s in subscribers for tag in tags if tag in s.arrivals
    ]
    missing = len(subscribers) * len(tags) - len(latencies)
    return latencies, missing, [(writer.acked[tag] - writer.issued[tag]) * 1000 for tag in tags]


@contextlib.asynccontextmanager
async def running_subscribers(target: str, count: int, channels: int) -> AsyncIterator[tuple[Writer, list[Subscriber]]]:
    """`count` subscribers reading on `channels` shared connections, and a Writer on its own."""
    subscriber_channels = [grpc.aio.insecure_channel(target) for _ in range(channels)]
    writer_channel = grpc.aio.insecure_channel(target)
    writer = Writer(memory_service_pb2_grpc.MemoryServiceStub(writer_channel))
    subscribers = [
        Subscriber(event_service_pb2_grpc.EventServiceStub(subscriber_channels[i % channels])) for i in range(count)
    ]
    await asyncio.gather(*(s.call.initial_metadata() for s in subscribers))
    tasks = [asyncio.create_task(s.run()) for s in subscribers]
    try:
        yield writer, subscribers
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel in [*subscriber_channels, writer_channel]:
            await channel.close()


async def bench(args: argparse.Namespace, port: int) -> dict:
    async with running_subscribers(f"127.0.0.1:{port}", args.subscribers, args.channels) as (writer, subscribers):
        return await measure(args, writer, subscribers)


async def measure(args: argparse.Namespace, writer: Writer, subscribers: list[Subscriber]) -> dict:
    write, issued = writer.write, writer.issued

    # Phase 1: paced writes, latency per delivery.
    for _ in range(20):
        await write()  # warm-up
    await wait_delivered(subscribers, list(issued), 30)
    latencies, missing, write_latencies = await paced_latencies(writer, subscribers, args.rate, args.duration)

    # Phase 2: closed-loop writers as fast as they go; deliveries per second.
    before = sum(len(s.seqs) for s in subscribers)
    first_seq = max(max(s.seqs) for s in subscribers)
    stop_at = time.perf_counter() + args.duration
    written = 0

    async def closed_loop() -> None:
        nonlocal written
        while time.perf_counter() < stop_at:
            await write()
            written += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(closed_loop() for _ in range(args.writers)))
    write_seconds = time.perf_counter() - t0
    last_tag = max(issued)
    await wait_delivered(subscribers, [last_tag], 120)
    delivery_seconds = max(s.arrivals.get(last_tag, 0) for s in subscribers) - t0
    delivered = sum(len(s.seqs) for s in subscribers) - before
    complete = all(
        [q for q in s.seqs if q > first_seq] == list(range(first_seq + 1, first_seq + written + 1)) for s in subscribers
    )
    return {
        "subscribers": args.subscribers,
        "latency_rate": args.rate,
        "latency_deliveries": len(latencies),
        "latency_missing": missing,
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
        "max_ms": max(latencies, default=0.0),
        "write_p50_ms": percentile(write_latencies, 50),
        "writes": written,
        "writes_per_s": written / write_seconds,
        "deliveries_per_s": delivered / delivery_seconds,
        "every_subscriber_complete": complete,
        "errors": sorted({s.error for s in subscribers if s.error}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--channels", type=int, default=4, help="client connections the subscribers share")
    parser.add_argument("--rate", type=float, default=50.0, help="writes per second in the latency phase")
    parser.add_argument("--writers", type=int, default=8, help="concurrent writers in the throughput phase")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    parser.add_argument("--mongodb-uri", default="", help="benchmark the MongoDB backend instead of SQLite")
    parser.add_argument("--python-flags", default="", help="for the server, e.g. '-m cProfile -o watch.prof'")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server, port = start_server(args, Path(tmp))
        try:
            report = asyncio.run(bench(args, port))
        finally:
            server.terminate()
    backend = "mongodb" if args.mongodb_uri else "sqlite"
    print(f"Watch fan-out, {backend}, {report['subscribers']} subscribers")
    print(
        f"  latency at {report['latency_rate']:g} writes/s: p50 {report['p50_ms']:.1f} ms, "
        f"p99 {report['p99_ms']:.1f} ms, max {report['max_ms']:.1f} ms "
        f"({report['latency_deliveries']} deliveries, {report['latency_missing']} missing; "
        f"the write itself: p50 {report['write_p50_ms']:.1f} ms)"
    )
    print(
        f"  throughput: {report['writes_per_s']:.0f} writes/s -> {report['deliveries_per_s']:.0f} deliveries/s; "
        f"every subscriber complete and in order: {report['every_subscriber_complete']}"
    )
    if report["errors"]:
        print(f"  stream errors: {report['errors']}")


if __name__ == "__main__":
    main()
