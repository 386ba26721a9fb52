"""Watch fan-out: N subscribers on EventService.Watch while writers append messages.

Each write is a SaveMessage to one of the writer sessions; every subscriber watches
MESSAGES_APPENDED for those sessions and records when each message id arrives.
Delivery latency = arrival time - the moment the SaveMessage call was issued (so it
includes the write itself). Bounded in time (--duration) and count (--max-writes);
subscribers get --drain seconds after the last write to catch up.

    python tests/load/watch_fanout.py --target 127.0.0.1:PORT --subscribers 20 --rate 100 --duration 10

Prints one JSON object: writes, deliveries (expected and received), lost, duplicates,
p50/p99 latency, delivery throughput, errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import grpc
from google.protobuf import struct_pb2

from memoryd.v1 import (
    event_pb2,
    event_service_pb2,
    event_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    message_pb2,
)


def _percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))]


async def _subscriber(stub, sessions: list[str], arrivals: dict[str, list[float]], ready: asyncio.Event, errors: list):
    request = event_service_pb2.WatchRequest(
        session_ids=sessions, types=[event_pb2.EVENT_TYPE_MESSAGES_APPENDED]
    )
    call = stub.Watch(request)
    ready.set()
    try:
        async for response in call:
            if response.WhichOneof("kind") != "event":
                continue
            now = time.perf_counter()
            for ref in response.event.messages_appended.messages:
                arrivals.setdefault(ref.id, []).append(now)
    except asyncio.CancelledError:
        call.cancel()
        raise
    except grpc.aio.AioRpcError as exc:
        errors.append(f"watch: {exc.code().name}")


async def run(args: argparse.Namespace) -> dict:
    sessions = [f"fanout-{i}" for i in range(args.sessions)]
    options = [("grpc.max_receive_message_length", 64 << 20)]
    # Subscribers share a few channels (as one client process would), writers use their own.
    sub_channels = [grpc.aio.insecure_channel(args.target, options=options) for _ in range(args.channels)]
    write_channel = grpc.aio.insecure_channel(args.target)
    arrivals_by_sub: list[dict[str, list[float]]] = [{} for _ in range(args.subscribers)]
    errors: list[str] = []
    sent: dict[str, float] = {}
    write_latencies: list[float] = []
    subscribers = []
    try:
        for i in range(args.subscribers):
            stub = event_service_pb2_grpc.EventServiceStub(sub_channels[i % len(sub_channels)])
            ready = asyncio.Event()
            subscribers.append(asyncio.create_task(_subscriber(stub, sessions, arrivals_by_sub[i], ready, errors)))
            await ready.wait()
        for channel in sub_channels:
            await channel.channel_ready()
        # Give the server time to register every stream before the first write.
        await asyncio.sleep(args.settle)

        memory = memory_service_pb2_grpc.MemoryServiceStub(write_channel)
        metadata = struct_pb2.Struct()
        metadata.update({"platform": "fanout"})
        interval = 1.0 / args.rate
        deadline = time.perf_counter() + args.duration
        in_flight: set[asyncio.Task] = set()
        n = 0

        async def write(i: int) -> None:
            started = time.perf_counter()
            try:
                response = await memory.SaveMessage(
                    memory_service_pb2.SaveMessageRequest(
                        session_id=sessions[i % len(sessions)],
                        message=message_pb2.Message(role="user", content=f"fan-out {i}", metadata=metadata),
                    ),
                    timeout=10,
                )
            except grpc.aio.AioRpcError as exc:
                errors.append(f"save: {exc.code().name}")
                return
            sent[response.message.id] = started
            write_latencies.append(time.perf_counter() - started)

        next_at = time.perf_counter()
        while time.perf_counter() < deadline and n < args.max_writes:
            task = asyncio.create_task(write(n))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
            n += 1
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
        write_window = args.duration if n < args.max_writes else time.perf_counter() - (deadline - args.duration)
        if in_flight:
            await asyncio.gather(*in_flight)
        expected = len(sent) * args.subscribers
        drain_until = time.perf_counter() + args.drain
        while time.perf_counter() < drain_until:
            received = sum(1 for arrivals in arrivals_by_sub for msg_id in arrivals if msg_id in sent)
            if received >= expected:
                break
            await asyncio.sleep(0.05)
    finally:
        for task in subscribers:
            task.cancel()
        await asyncio.gather(*subscribers, return_exceptions=True)
        for channel in [*sub_channels, write_channel]:
            await channel.close()

    latencies: list[float] = []
    duplicates = 0
    first_arrival = None
    last_arrival = None
    for arrivals in arrivals_by_sub:
        for msg_id, times in arrivals.items():
            if msg_id not in sent:
                continue
            duplicates += len(times) - 1
            latencies.append(times[0] - sent[msg_id])
            first_arrival = min(first_arrival or times[0], times[0])
            last_arrival = max(last_arrival or times[0], times[0])
    span = (last_arrival - first_arrival) if latencies and last_arrival > first_arrival else 0.0
    return {
        "subscribers": args.subscribers,
        "writes": len(sent),
        "write_rps": round(len(sent) / max(write_window, 1e-9), 1),
        "write_p50_ms": round(_percentile(write_latencies, 50) * 1e3, 2),
        "expected_deliveries": len(sent) * args.subscribers,
        "deliveries": len(latencies),
        "lost": len(sent) * args.subscribers - len(latencies),
        "duplicates": duplicates,
        "delivery_p50_ms": round(_percentile(latencies, 50) * 1e3, 2),
        "delivery_p99_ms": round(_percentile(latencies, 99) * 1e3, 2),
        "delivery_mean_ms": round(statistics.fmean(latencies) * 1e3, 2) if latencies else 0.0,
        "deliveries_per_s": round(len(latencies) / span, 1) if span else 0.0,
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, help="host:port of memoryd")
    parser.add_argument("--subscribers", type=int, default=20)
    parser.add_argument("--channels", type=int, default=4, help="connections the subscribers share")
    parser.add_argument("--sessions", type=int, default=10, help="sessions written to (all watched)")
    parser.add_argument("--rate", type=float, default=100.0, help="writes per second")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of writing")
    parser.add_argument("--max-writes", type=int, default=10_000)
    parser.add_argument("--settle", type=float, default=1.0, help="seconds between subscribing and writing")
    parser.add_argument("--drain", type=float, default=5.0, help="seconds to wait for late deliveries")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
