"""The vector phase of the load suite (runner.py, LOAD_PHASES `vectors`): SearchMemory on the
embedded default (Qdrant Edge) at LOAD_VECTOR_POINTS (100,000) and, when set,
LOAD_VECTOR_POINTS_BIG (e.g. 1,000,000) points of 384 dimensions.

Data: two tenants (bearer tokens), each with half the points; 10% of each tenant's points
carry a second model. Every point indexes a stored message (sessions of 50), so context
windows read real history. A message says 16 words drawn from a 4,096-word vocabulary by
Zipf's law (rank r weighs 1/r): as in conversation, a keyword query's words occur in a few
percent of the messages, not in all of them (`message_text`). Seeding goes through the public RPCs (SaveMessages, batched
UpsertVectors: that is the upsert points/s figure); then the suite waits until the
background builder has indexed the data, restarts memoryd (startup time) and runs, in one
ghz run each against the do-nothing servicer and against memoryd: context window 2 and 0,
model-filtered (the 10% model) and session-scoped searches.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import os
import random
import re
import shutil
import time
from pathlib import Path

import grpc
import numpy as np

from loadlib import ServerProcess, env_float, env_int, start_memoryd
from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2
from memoryd.storage.qdrant.edge import REBUILD_THRESHOLD_KB
from memoryd.v1 import vector_service_pb2, vector_service_pb2_grpc

DIMS = 384
MAIN_MODEL, OTHER_MODEL = "load:main-384", "load:other-384"
TENANTS = {"load-a": "load-token-a-0123456789", "load-b": "load-token-b-0123456789"}
SESSION_SIZE = 50
UPSERT_BATCH = 500
INDEX_TIMEOUT = env_float("LOAD_VECTOR_INDEX_TIMEOUT", 3600)
SEARCH_CONCURRENCY = env_int("LOAD_VECTOR_CONCURRENCY", 16)
WARM_UP_SECONDS = env_float("LOAD_VECTOR_WARM_UP", 5)
# The seeded messages' words (`message_text`) and the keyword part of the hybrid scenarios:
# four words of ranks 20, 100, 400 and 1,500, each in about 8%, 1.7%, 0.4% and 0.1% of the messages.
VOCABULARY_SIZE = 4096
WORDS_PER_MESSAGE = 16
QUERY_WORD_RANKS = (20, 100, 400, 1500)
# The data dir's marker says which seeding made it: another one is seeded afresh.
SEEDING = "zipf-words"
REBUILT = re.compile(r"vector shard \S+_d384 rebuilt: (\d+) points, (\d+) indexed")


def tokens_env() -> dict[str, str]:
    # Two index-building threads shorten the setup; the searches measured run with no build going.
    return {
        "MEMORYD_TOKENS": ", ".join(f"{tenant}: {token}" for tenant, token in TENANTS.items()),
        "MEMORYD_VECTOR_BUILD_THREADS": os.environ.get("LOAD_VECTOR_BUILD_THREADS", "2"),
    }


def _metadata(tenant: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {TENANTS[tenant]}"),)


def _vector(rng: random.Random) -> list[float]:
    return [rng.gauss(0, 1) for _ in range(DIMS)]


def _vectors(rng: np.random.Generator, count: int) -> list[list[float]]:
    # numpy: the client must not be what limits the upsert rate
    return rng.standard_normal((count, DIMS), dtype=np.float32).tolist()


@functools.cache
def vocabulary() -> tuple[list[str], list[float]]:
    """Pronounceable made-up words (nothing the tokenizer drops or merges) and their Zipf
    weights, as cumulative weights for random.choices."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    words = [a + b + end for a, b, end in itertools.product(syllables, syllables, ("", "n", "r"))]
    random.Random(7).shuffle(words)
    words = words[:VOCABULARY_SIZE]
    return words, list(itertools.accumulate(1 / rank for rank in range(1, len(words) + 1)))


def message_text(rng: random.Random, n: int) -> str:
    words, weights = vocabulary()
    return f"Load-test message {n}: {' '.join(rng.choices(words, cum_weights=weights, k=WORDS_PER_MESSAGE))}."


def query_text() -> str:
    words, _ = vocabulary()
    return " ".join(words[rank - 1] for rank in QUERY_WORD_RANKS)


def session_id(tenant: str, n: int) -> str:
    return f"load-vec-{tenant[-1]}-{n}"


async def save_sessions(address: str, tenant: str, points: int, start_ts: int) -> list[tuple[str, message_pb2.Message]]:
    """The messages the points index (sessions of 50), through SaveMessages: (session, stored message)."""
    stored: list[tuple[str, message_pb2.Message]] = []
    rng = random.Random(f"{tenant}-text")
    async with grpc.aio.insecure_channel(address) as channel:
        memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        for s in range(points // SESSION_SIZE):
            messages = [
                message_pb2.Message(role="user" if i % 2 == 0 else "assistant", content=message_text(rng, i),
                                    timestamp=start_ts + s * SESSION_SIZE + i)
                for i in range(SESSION_SIZE)
            ]
            response = await memory.SaveMessages(
                memory_service_pb2.SaveMessagesRequest(session_id=session_id(tenant, s), messages=messages),
                metadata=_metadata(tenant), timeout=120,
            )
            stored += [(session_id(tenant, s), m) for m in response.messages]
    return stored


async def upsert_points(address: str, tenant: str, stored: list[tuple[str, message_pb2.Message]], *,
                        with_text: bool = True) -> None:
    """Batched UpsertVectors of one point per stored message (10% of the second model)."""
    rng = np.random.default_rng(abs(hash(tenant)) % (1 << 32))
    options = [("grpc.max_send_message_length", 64 << 20), ("grpc.max_receive_message_length", 64 << 20)]
    async with grpc.aio.insecure_channel(address, options=options) as channel:
        vectors = vector_service_pb2_grpc.VectorServiceStub(channel)
        for offset in range(0, len(stored), UPSERT_BATCH):
            chunk = stored[offset : offset + UPSERT_BATCH]
            batch = [
                vector_service_pb2.VectorPoint(
                    model_id=OTHER_MODEL if (offset + i) % 10 == 0 else MAIN_MODEL, vector=vector,
                    session_id=session, message_id=m.id, timestamp=m.timestamp, role=m.role, platform="common",
                    text=m.content if with_text else "",
                )
                for i, ((session, m), vector) in enumerate(zip(chunk, _vectors(rng, len(chunk))))
            ]
            await vectors.UpsertVectors(vector_service_pb2.UpsertVectorsRequest(points=batch),
                                        metadata=_metadata(tenant), timeout=120)


async def _seed_tenant(address: str, tenant: str, points: int, start_ts: int, stats: dict) -> None:
    stored = await save_sessions(address, tenant, points, start_ts)
    started = time.monotonic()
    await upsert_points(address, tenant, stored)
    stats[tenant] = {"points": len(stored), "upsert_seconds": time.monotonic() - started}


def seed(server: ServerProcess, points: int, start_ts: int) -> dict:
    """Both tenants at once; upsert points/s over the time both were upserting."""
    stats: dict = {}

    async def both() -> None:
        await asyncio.gather(*(_seed_tenant(server.target, t, points // 2, start_ts, stats) for t in TENANTS))

    asyncio.run(both())
    total = sum(s["points"] for s in stats.values())
    seconds = max(s["upsert_seconds"] for s in stats.values())
    return {"points": total, "upsert_seconds": round(seconds, 1), "upsert_points_per_s": round(total / seconds)}


def wait_indexed(server: ServerProcess, points: int, log) -> dict:
    """Until the builder reports the shard with every point and (almost) all of them indexed."""
    started = time.monotonic()
    while time.monotonic() - started < INDEX_TIMEOUT:
        found = REBUILT.findall(server.log_path.read_text(errors="replace"))
        if found:
            total, indexed = map(int, found[-1])
            if total >= points and total - indexed <= 10_000:
                return {"indexed_after_seconds": round(time.monotonic() - started, 1), "indexed": indexed}
        time.sleep(2)
    log(f"vectors: index not built within {INDEX_TIMEOUT:g}s")
    return {"indexed_after_seconds": None}


def scenarios(workdir: Path, points: int) -> dict[str, Path]:
    """ghz configs (written per run: a 384-number query vector is no file to keep)."""
    rng = random.Random(99)
    query = [round(x, 4) for x in _vector(rng)]
    base = {
        "call": "memoryd.v1.VectorService/SearchMemory",
        "concurrency": SEARCH_CONCURRENCY,
        "connections": 4,
        "metadata": {"authorization": f"Bearer {TENANTS['load-a']}"},
    }
    sessions = points // 2 // SESSION_SIZE
    variants = {
        "search_384_cw2": {"model_id": MAIN_MODEL, "top_k": 5, "context_window": 2},
        "search_384_hybrid_cw2": {"model_id": MAIN_MODEL, "query_text": query_text(), "top_k": 5, "context_window": 2},
        "search_384_cw0": {"model_id": MAIN_MODEL, "top_k": 5, "context_window": 0},
        "search_384_model10": {"model_id": OTHER_MODEL, "top_k": 5, "context_window": 2},
        "search_384_session": {"model_id": MAIN_MODEL, "top_k": 5, "context_window": 2, "scope": "RECALL_SCOPE_SESSION",
                               "session_id": f"load-vec-a-{{{{randomInt 0 {sessions}}}}}"},
    }
    paths = {}
    for name, data in variants.items():
        path = workdir / f"{name}.json"
        path.write_text(json.dumps({**base, "data": {"query_vector": query, **data}}))
        paths[name] = path
    return paths


def prepare(workdir: Path, points: int, label: str, start_ts: int, log) -> tuple[Path, dict]:
    """The data dir `<workdir>/vectors-<label>` seeded with `points` and indexed: seeded
    here unless an earlier run left it (its marker); (data dir, seeding figures)."""
    data_dir = workdir / f"vectors-{label}"
    marker = data_dir / f"seeded-{points}-{SEEDING}"
    extra: dict = {}
    if not marker.exists():
        shutil.rmtree(data_dir, ignore_errors=True)  # another seeding's (or an unfinished one)
        # Bulk load without builds in between (one index build at the end, not one per
        # threshold's worth of points), then a server with the defaults builds the index.
        bulk = {**tokens_env(), "MEMORYD_VECTOR_REBUILD_THRESHOLD_KB": str(1 << 40)}
        with start_memoryd(f"memoryd-vectors-{label}-seed", workdir, data_dir, env=bulk) as server:
            log(f"vectors {label}: seeding {points:,} messages and vectors")
            extra.update(seed(server, points, start_ts))
        if points * DIMS * 4 >= REBUILD_THRESHOLD_KB * 1024:
            log(f"vectors {label}: {extra['upsert_points_per_s']:,} points/s upserted; building the index")
            with start_memoryd(f"memoryd-vectors-{label}-index", workdir, data_dir, env=tokens_env()) as server:
                extra.update(wait_indexed(server, points, log))
        # (Fewer points start no index build: they are searched exactly.)
        marker.write_text("1")
    return data_dir, extra


def run(suite, points: int, label: str, log) -> None:
    """Seed (or reuse), wait for the index, restart, then ceiling and memoryd per scenario."""
    workdir = suite.workdir
    data_dir, extra = prepare(workdir, points, label, suite.seed_now - 30 * 86_400_000, log)
    started = time.monotonic()
    server = start_memoryd(f"memoryd-vectors-{label}", workdir, data_dir, env=tokens_env())
    extra["startup_seconds"] = round(time.monotonic() - started, 2)
    try:
        paths = scenarios(workdir, points)
        from loadlib import run_ghz, start_noop

        # Unmeasured warm-up: a freshly started server first pages its shard in from disk.
        for path in paths.values():
            run_ghz(path, server.target, target="warm-up", duration=WARM_UP_SECONDS)

        with start_noop(workdir) as noop:
            for name, path in paths.items():
                suite.ghz_path(noop, path, name, "noop")
        for name, path in paths.items():
            suite.ghz_path(server, path, name, f"edge-{label}")
    finally:
        server.stop()
    suite.extra[f"vectors_{label}"] = extra
