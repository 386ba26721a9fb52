"""Benchmark of Watch catch-up (not a test): a full replay of a large log, and what one costs live subscribers.

1. Seeds an N-event log (default 1,000,000 messages-appended events) through the store API,
   then starts `memoryd serve` on it in its own process (SQLite).
2. Replay: one subscriber, in its own process, reads `after_seq=0` to the end and checks it
   got every seq once, in order. Reports events/s and the server's RSS before, at its peak
   (sampled every 0.1 s) and after.
3. Live: M subscribers (default 100, this process) watch one session while SaveMessage is
   called there at a fixed rate, in alternating phases while another full replay is under
   way: with the replaying client paused (SIGSTOP: its stream waits on flow control, so the
   server does no replay work) and with it running. Alternating in one run, over the same
   streams, keeps the machine's other load out of the comparison; each kind's deliveries
   are pooled for p50/p99 (latency = arrival minus the moment the write was issued).

    .venv/bin/python tests/events/bench_catch_up.py                   # 1,000,000 events, 100 subscribers
    .venv/bin/python tests/events/bench_catch_up.py --events 200000   # quicker

Everything shares the machine. The server and this process (the live subscribers) run at
raised priority when allowed (root), so that unrelated load on a shared machine does not
decide the comparison; the replaying client of step 3 runs at the lowest priority, so that
its own parsing does not take the server's CPU as it would not from another machine (its
rate during the phases is reported).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import grpc

from bench_watch import paced_latencies, percentile, running_subscribers, serve, wait_delivered  # beside this script

from memoryd.v1 import event_service_pb2, event_service_pb2_grpc
from memoryd.app import open_store
from memoryd.config import Config
from memoryd.domain.models import DEFAULT_TENANT, EventDraft, EventType, now_ms

SEED_CHUNK = 20_000
PRIORITY = -10  # nice value, applied when allowed (root)


async def seed(data_dir: Path, count: int) -> float:
    """Appends `count` events (one message ref each, as SaveMessage writes) in a few big
    transactions; returns the seconds it took."""
    store = open_store(Config(data_dir=data_dir))
    await store.open()
    started = time.perf_counter()
    try:
        for start in range(0, count, SEED_CHUNK):
            drafts = [
                EventDraft(
                    EventType.MESSAGES_APPENDED,
                    f"replay-{i % 1000}",
                    {"messages": [{"id": uuid.UUID(int=i).hex, "seq": i // 1000 + 1, "timestamp": i, "role": "user"}]},
                )
                for i in range(start, min(count, start + SEED_CHUNK))
            ]
            await store.write_metadata_guarded(DEFAULT_TENANT, [], None, drafts, now_ms())
    finally:
        await store.close()
    return time.perf_counter() - started


def raise_priority() -> None:
    """For the server and the live subscribers: other work on a shared machine must not
    decide the comparison (the replaying client keeps the default priority)."""
    with contextlib.suppress(PermissionError):
        os.setpriority(os.PRIO_PROCESS, 0, PRIORITY)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class RssSampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = rss_mib(pid)
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.1):
            self.peak = max(self.peak, rss_mib(self.pid))


def spawn_replay(target: str, until: int, *, nice: int = 0) -> subprocess.Popen:
    command = [sys.executable, __file__, "--replay-target", target, "--events", str(until)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, preexec_fn=lambda: os.nice(nice))


async def replay(target: str, until: int) -> dict:
    """The replaying subscriber: Watch(after_seq=0) until seq `until`, checking every seq
    arrives once, in order; prints "at <seq> <monotonic time>" every 10,000 events, then its result."""
    async with grpc.aio.insecure_channel(target) as channel:
        call = event_service_pb2_grpc.EventServiceStub(channel).Watch(event_service_pb2.WatchRequest(after_seq=0))
        expected, started = 1, 0.0
        async for response in call:
            if not response.HasField("event"):
                continue
            if response.event.seq != expected:
                return {"error": f"got seq {response.event.seq}, expected {expected}"}
            if expected == 1:
                started = time.perf_counter()
            if expected == 1 or expected % 10_000 == 0:
                print(f"at {expected} {time.monotonic()}", flush=True)
            if expected == until:
                break
            expected += 1
        call.cancel()
    seconds = time.perf_counter() - started
    return {"events": expected, "seconds": round(seconds, 2), "events_per_s": round(expected / seconds)}


class ReplayProgress(threading.Thread):
    """Reads a replaying subprocess's "at <seq> <time>" lines: how fast it went when."""

    def __init__(self, process: subprocess.Popen) -> None:
        super().__init__(daemon=True)
        self.process = process
        self.samples: list[tuple[float, int]] = []
        self.first = threading.Event()

    def run(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("at "):
                _, seq, at = line.split()
                self.samples.append((float(at), int(seq)))
                self.first.set()

    def rate(self, windows: list[tuple[float, float]]) -> float:
        """Events per second over the given (start, end) time windows."""
        events = seconds = 0.0
        for start, end in windows:
            inside = [(t, seq) for t, seq in self.samples if start <= t <= end]
            if len(inside) >= 2:
                events += inside[-1][1] - inside[0][1]
                seconds += inside[-1][0] - inside[0][0]
        return events / seconds if seconds else 0.0


async def live_phases(target: str, args: argparse.Namespace, replaying: subprocess.Popen) -> dict:
    """Pooled delivery latencies (ms) of the live subscribers with the replay paused and running."""
    async with running_subscribers(target, args.subscribers, 4) as (writer, subscribers):
        for _ in range(20):
            await writer.write()  # warm-up
        await wait_delivered(subscribers, list(writer.issued), 30)
        phases: dict = {"without": [], "during": [], "writes without": [], "writes during": [], "missing": 0}
        phases["replay_running"], phases["windows"] = [], []
        for _ in range(args.rounds):
            for kind, sig in (("without", signal.SIGSTOP), ("during", signal.SIGCONT)):
                replaying.send_signal(sig)
                await asyncio.sleep(0.5)  # let what is in flight settle
                started = time.monotonic()
                latencies, missing, writes = await paced_latencies(writer, subscribers, args.rate, args.duration)
                if kind == "during":
                    phases["windows"].append((started, time.monotonic()))
                phases[kind] += latencies
                phases[f"writes {kind}"] += writes
                phases["missing"] += missing
            phases["replay_running"].append(replaying.poll() is None)
        phases["errors"] = sorted({s.error for s in subscribers if s.error})
        return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the log")
    parser.add_argument("--subscribers", type=int, default=100, help="live subscribers")
    parser.add_argument("--rate", type=float, default=50.0, help="writes per second in the live phases")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds of writing per live phase")
    parser.add_argument("--rounds", type=int, default=8, help="pairs of live phases, without and during a replay")
    parser.add_argument(
        "--tmp", default=None, help="where the log goes (default: the system's temp dir; /dev/shm keeps disk load out)"
    )
    parser.add_argument("--replay-target", help=argparse.SUPPRESS)  # the replaying subprocess
    args = parser.parse_args()
    if args.replay_target:
        print(json.dumps(asyncio.run(replay(args.replay_target, args.events))), flush=True)
        return

    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        data_dir = Path(tmp)
        seed_seconds = asyncio.run(seed(data_dir, args.events))
        print(f"seeded {args.events:,} events through the store API in {seed_seconds:.1f} s")
        server, port = serve(
            data_dir,
            *("--vectors-enabled", "false", "--event-retention-count", "100000000"),  # keep the whole seeded log
            preexec_fn=raise_priority,
        )
        target = f"127.0.0.1:{port}"
        try:
            time.sleep(1)
            before = rss_mib(server.pid)
            sampler = RssSampler(server.pid)
            sampler.start()
            alone = spawn_replay(target, args.events)
            alone_out, _ = alone.communicate()
            sampler.stopped.set()
            sampler.join()
            after = rss_mib(server.pid)
            result = json.loads(alone_out.splitlines()[-1])
            print(
                f"full replay after_seq=0: {result}\n"
                f"  server RSS {before:.1f} MiB before, {sampler.peak:.1f} MiB peak ({sampler.peak - before:+.1f}), "
                f"{after:.1f} MiB after"
            )

            # Lowest priority: the replaying client's parsing must not take the server's CPU,
            # as it would not from another machine; it still reads as fast as it can when a
            # core is free (its rate during the phases is reported).
            replaying = spawn_replay(target, args.events, nice=19)
            progress = ReplayProgress(replaying)
            progress.start()
            progress.first.wait()  # the replay is under way
            raise_priority()
            phases = asyncio.run(live_phases(target, args, replaying))
            replaying.send_signal(signal.SIGCONT)
            replaying.terminate()
            replaying.wait(timeout=30)
            progress.join(timeout=10)
            quiet, busy = phases["without"], phases["during"]
            print(
                f"{args.subscribers} live subscribers at {args.rate:g} writes/s, {args.rounds} rounds of "
                f"{args.duration:g} s per phase ({len(quiet)} and {len(busy)} deliveries, {phases['missing']} missing, "
                f"errors {phases['errors'] or 'none'}; replay running through each round: {phases['replay_running']})"
            )
            for kind, values in (("without a replay", quiet), ("during a replay", busy)):
                writes = phases["writes " + kind.split()[0]]
                print(
                    f"  {kind}: p50 {percentile(values, 50):.1f} ms, p99 {percentile(values, 99):.1f} ms "
                    f"(the writes themselves: p50 {percentile(writes, 50):.1f} ms, p99 {percentile(writes, 99):.1f} ms)"
                )
            print(f"  p99 during / without: {percentile(busy, 99) / percentile(quiet, 99):.2f}")
            print(f"  the replay meanwhile: {progress.rate(phases['windows']):.0f} events/s while running")
        finally:
            server.terminate()


if __name__ == "__main__":
    main()
