"""SearchMemory latency at 10k points in Qdrant local mode (the embedded default).

Starts `memoryd serve` as a subprocess on a fresh data dir, seeds N messages (100 per
session) and one vector per message through the public RPCs, then times sequential
SearchMemory calls end to end (client-observed) and prints p50/p95/p99 per scenario.

    .venv/bin/python tests/vectors/bench_search.py [--points 10000] [--dim 384] [--queries 300]

Not a test: pytest does not collect it (the name does not start with test_).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import numpy as np

from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import memory_service_pb2_grpc, message_pb2
from memoryd.v1 import vector_service_pb2 as pb
from memoryd.v1 import vector_service_pb2_grpc

MODEL = "bench:random"
PER_SESSION = 100
BATCH = 500


def percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q))


async def wait_for_port(path: Path, process: subprocess.Popen, timeout: float = 60.0) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if process.poll() is not None:
            raise RuntimeError(f"memoryd exited with {process.returncode}")
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        await asyncio.sleep(0.1)
    raise TimeoutError("memoryd did not start")


async def seed(channel: grpc.aio.Channel, points: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
    vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
    embeddings = rng.standard_normal((points, dim)).astype(np.float32)
    base = int(time.time() * 1000) - points * 60_000
    for start in range(0, points, BATCH):
        by_session: dict[str, list[int]] = {}
        for i in range(start, min(points, start + BATCH)):
            by_session.setdefault(f"bench-{i // PER_SESSION}", []).append(i)
        upserts = []
        for session, indexes in by_session.items():
            messages = [
                message_pb2.Message(role="user" if i % 2 == 0 else "assistant", content=f"message {i} " + "x" * 200,
                                    timestamp=base + i * 60_000)
                for i in indexes
            ]
            saved = await memory.SaveMessages(mem_pb.SaveMessagesRequest(session_id=session, messages=messages))
            for i, m in zip(indexes, saved.messages):
                upserts.append(pb.VectorPoint(model_id=MODEL, vector=embeddings[i].tolist(), session_id=session,
                                              message_id=m.id, timestamp=m.timestamp, role=m.role, text=m.content,
                                              platform="bench", sender_id=f"user-{i % 50}"))
        await vectors.UpsertVectors(pb.UpsertVectorsRequest(points=upserts))
    return embeddings


async def run(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-") as tmp:
        port_file = Path(tmp) / "port"
        exe = Path(sys.executable).with_name("memoryd")
        env = {**os.environ, "MEMORYD_LOG_LEVEL": "warning"}
        process = subprocess.Popen(
            [str(exe), "serve", "--listen", "127.0.0.1:0", "--port-file", str(port_file), "--data-dir", tmp],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            port = await wait_for_port(port_file, process)
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                started = time.perf_counter()
                embeddings = await seed(channel, args.points, args.dim, rng)
                print(f"seeded {args.points} messages + vectors (dim {args.dim}) in {time.perf_counter() - started:.1f}s")
                stub = vector_service_pb2_grpc.VectorServiceStub(channel)
                scenarios = {
                    "top_k=5 window=2 (defaults)": {},
                    "top_k=5 window=0": {"context_window": 0},
                    "top_k=5 others-only (x8)": {"recall_roles": pb.RECALL_ROLES_OTHERS_ONLY},
                    "top_k=5 session scope": {"scope": pb.RECALL_SCOPE_SESSION},
                    "top_k=5 user scope (~300 admitted)": {"scope": pb.RECALL_SCOPE_USER, "speaker_ids": ["user-7"]},
                    # Every point is on this platform: more than local mode's in-process
                    # scoring takes, so this one shows Qdrant's own filter in local mode.
                    "top_k=5 platform scope (all 10k)": {"scope": pb.RECALL_SCOPE_PLATFORM, "platform": "bench"},
                    "top_k=20 window=2": {"top_k": 20},
                }
                print(f"{'scenario':36} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}  (n={args.queries})")
                for name, extra in scenarios.items():
                    samples = []
                    for q in range(args.queries + 10):
                        target = int(rng.integers(0, args.points))
                        query = embeddings[target] + 0.3 * rng.standard_normal(args.dim).astype(np.float32)
                        request = pb.SearchMemoryRequest(query_vector=query.tolist(), model_id=MODEL,
                                                         session_id=f"bench-{target // PER_SESSION}", **extra)
                        if "top_k" not in extra:
                            request.top_k = 5
                        t0 = time.perf_counter()
                        response = await stub.SearchMemory(request)
                        if q >= 10:  # the first ones warm up caches
                            samples.append((time.perf_counter() - t0) * 1000)
                        assert response.hits
                    print(f"{name:36} {percentile(samples, 50):8.2f} {percentile(samples, 95):8.2f} "
                          f"{percentile(samples, 99):8.2f}")
        finally:
            process.terminate()
            process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=300)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
