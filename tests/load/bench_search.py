"""SearchMemory's CPU against the engine's own, and what the server-side embedder costs
(docs/PERFORMANCE.md, run Q). One run, one data dir (vector_load's: 100,000 points of 384
dimensions, two tenants, 10% of the vectors another model, sessions of 50), the default
search: hybrid, top 5, context 2.

- **served** (the figures to read): `memoryd serve` on the data dir with the server-side
  embedder pointed at a fast local endpoint (embed_server.py); ghz (concurrency 16,
  `--cpus 1`, `--duration` seconds) alternates, `--rounds` times, the search with the
  caller's vector and the same search with only its text (the endpoint's vector of the text
  is the caller's vector: both find the same hits). Per call: the CPU of the server process
  and of its engine process (/proc), and, in the same run, the engine's own CPU for the
  search's queries, timed in the engine process around `EdgeShard.query` / `query_batch`
  (engine_clock/sitecustomize.py). Then the do-nothing servicer's rate for the same request
  and its reply's size beside memoryd's.
- **profile**: the same calls one after another through the servicer in this process (the
  engine in its own process, as served): this process's CPU per search by stage, the engine
  process's, and the functions with the most CPU of their own (cProfile, a CPU clock).
- **engine** (optional): the searches one after another with Qdrant Edge in this process,
  its query calls timed: the engine's CPU per search without concurrency.

The whole call's CPU (server and engine process) over the engine's own is the ratio
docs/PERFORMANCE.md tracks (target: at most 2.5).

    .venv/bin/python tests/load/bench_search.py [--workdir DIR] [--points 100000]

Seeding and the index build take minutes the first time (about 6 on a quiet machine at
100,000); a `--workdir` keeps the data for the next run. `--json FILE` writes the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import inspect
import json
import os
import pstats
import signal
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import vector_load
from embed_server import text_vector
from loadlib import (
    REPO,
    ServerProcess,
    _children,
    ensure_ghz,
    now_ms,
    run_ghz,
    start_memoryd,
    start_noop,
    tree_cpu_seconds,
)
from memoryd.v1 import vector_service_pb2 as pb

HERE = Path(__file__).resolve().parent
CONCURRENCY = 16
def _log(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def request(*, with_vector: bool = True) -> pb.SearchMemoryRequest:
    """The measured search: hybrid, top 5, context 2, tenant A's main model."""
    text = vector_load.query_text()
    return pb.SearchMemoryRequest(
        query_vector=text_vector(text, vector_load.DIMS) if with_vector else [],
        model_id=vector_load.MAIN_MODEL if with_vector else "",
        query_text=text,
        top_k=5,
        context_window=2,
    )


class _Context:
    """What the servicer asks of a grpc.aio context."""

    def __init__(self, token: str) -> None:
        self._metadata = (("authorization", f"Bearer {token}"),)

    def invocation_metadata(self):
        return self._metadata

    def time_remaining(self) -> None:
        return None


class _EngineClock:
    """CPU of the engine's query calls, by space (0: keyword, else the dimension)."""

    def __init__(self) -> None:
        self.seconds: dict[int, float] = defaultdict(float)

    def shard(self, shard: Any, space: int) -> Any:
        clock = self

        class Timed:
            def __getattr__(self, name: str) -> Any:
                return getattr(shard, name)

            def query(self, query: Any) -> Any:
                return clock._timed(space, shard.query, query)

            def query_batch(self, batch: Any) -> Any:
                return clock._timed(space, shard.query_batch, batch)

        return Timed()

    def _timed(self, space: int, call: Callable[[Any], Any], argument: Any) -> Any:
        started = time.process_time()
        try:
            return call(argument)
        finally:
            self.seconds[space] += time.process_time() - started


async def _servicer(data_dir: Path, engine_process: bool, extra_env: dict[str, str] | None = None):
    from memoryd import app, config

    env = {
        **os.environ,
        **vector_load.tokens_env(),
        **(extra_env or {}),
        "MEMORYD_DATA_DIR": str(data_dir),
        "MEMORYD_VECTOR_ENGINE_PROCESS": "true" if engine_process else "false",
    }
    parts = await app.build(config.load(None, env))
    servicer = next(s for s in parts.servicers.values() if hasattr(s, "SearchMemory"))
    return parts, servicer


async def _close(parts) -> None:
    await parts.vectors.close()
    await parts.store.close()


def _caller(servicer, raw: bytes) -> Callable[[], Any]:
    """The servicer's SearchMemory as the gRPC server calls it (rpc.add_service)."""
    context = _Context(vector_load.TENANTS["load-a"])
    method = pb.DESCRIPTOR.services_by_name["VectorService"].methods_by_name["SearchMemory"]
    options: dict[str, Any] = {"request_type": pb.SearchMemoryRequest}
    # (The wrapper takes the RPC's name since per-RPC access; the code before did not.)
    if "rpc" in inspect.signature(servicer.SearchMemory, follow_wrapped=False).parameters:
        options["rpc"] = method.full_name

    async def call() -> bytes:
        response = await servicer.SearchMemory(raw, context, **options)
        return response.SerializeToString()

    return call


class _Stages:
    """CPU (time.process_time: every thread, so a window read's SQLite thread counts) spent
    in named calls, for calls made one after another; nested stages count in both."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, owner: Any, name: str, label: str) -> None:
        call = getattr(owner, name)
        seconds = self.seconds

        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return await call(*args, **kwargs)
            finally:
                seconds[label] += time.process_time() - started

        setattr(owner, name, timed)


async def engine_split(data_dir: Path, searches: int) -> dict:
    """Phase 1: the engine's CPU per search, and the whole in-process call's for reference."""
    from memoryd.storage.qdrant import edge

    clock = _EngineClock()
    original = edge.EdgeIndex._read

    async def timed_read(self, space, fn):
        return await original(self, space, lambda shard: fn(clock.shard(shard, space)))

    edge.EdgeIndex._read = timed_read
    try:
        parts, servicer = await _servicer(data_dir, engine_process=False)
        stages = _Stages()
        stages.wrap(parts.vectors.index, "query", "index query")
        try:
            call = _caller(servicer, request().SerializeToString())
            for _ in range(max(20, searches // 10)):
                await call()
            clock.seconds.clear()
            stages.seconds.clear()
            started = time.process_time()
            for _ in range(searches):
                await call()
            whole = time.process_time() - started
        finally:
            await _close(parts)
    finally:
        edge.EdgeIndex._read = original
    per_search = {space: seconds / searches for space, seconds in clock.seconds.items()}
    return {
        "engine_ms": round(sum(per_search.values()) * 1e3, 3),
        "engine_keyword_ms": round(per_search.get(0, 0.0) * 1e3, 3),
        "engine_dense_ms": round(per_search.get(vector_load.DIMS, 0.0) * 1e3, 3),
        # The index's query with the engine in this process: the engine's calls and the Python
        # that builds them and reads their results (what the engine process adds is the trip).
        "index_query_ms": round(stages.seconds["index query"] / searches * 1e3, 3),
        "in_process_whole_ms": round(whole / searches * 1e3, 3),
    }


async def profile(data_dir: Path, searches: int, top: int) -> dict:
    """Phase 2: this process's CPU per search by stage (the engine in its own process, as
    served), the engine process's CPU per search, and the functions with the most CPU of
    their own (cProfile with a CPU clock: small functions look dearer than they are)."""
    from memoryd.domain import recall

    parts, servicer = await _servicer(data_dir, engine_process=True)
    stages = _Stages()
    try:
        call = _caller(servicer, request().SerializeToString())
        for _ in range(max(20, searches // 10)):
            await call()
        engine_pid = parts.vectors.index.pid
        engine_before = tree_cpu_seconds(engine_pid)
        started = time.process_time()
        for _ in range(searches):
            await call()
        main = time.process_time() - started
        engine = tree_cpu_seconds(engine_pid) - engine_before
        # The stages, in a second series (their wrappers cost a little).
        stages.wrap(parts.vectors, "search", "VectorRecall.search")
        stages.wrap(parts.vectors.index, "query", "index query (this process: send, wait, receive)")
        stages.wrap(parts.vectors, "_with_vector", "the query's vector (embedder)")
        stages.wrap(parts.vectors, "legacy_model", "legacy-model marker")
        stages.wrap(recall, "adjacency", "lift: adjacency, with its window read")
        stages.wrap(recall, "select_hits", "hits and their context windows, with their read")
        stages.wrap(parts.store, "context_windows", "window reads (SQLite), in the two above")
        started = time.process_time()
        for _ in range(searches):
            await call()
        staged = time.process_time() - started
        staged_seconds = dict(stages.seconds)
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(searches):
            await call()
        profiler.disable()
    finally:
        await _close(parts)
    per_search = {label: seconds / searches * 1e3 for label, seconds in staged_seconds.items()}
    search_ms = per_search.get("VectorRecall.search", 0.0)
    per_search["outside search: decode, validation, response, serialization"] = staged / searches * 1e3 - search_ms
    per_search["in search, beside the above: fusion, ranking, selection"] = search_ms - sum(
        per_search.get(label, 0.0)
        for label in (
            "index query (this process: send, wait, receive)", "the query's vector (embedder)", "legacy-model marker",
            "lift: adjacency, with its window read", "hits and their context windows, with their read",
        )
    )
    stats = pstats.Stats(profiler).stats
    hottest = sorted(((row[2], row[1], f"{Path(path).name}:{fn}") for (path, _, fn), row in stats.items()), reverse=True)
    return {
        "main_ms": round(main / searches * 1e3, 3),
        "engine_process_ms": round(engine / searches * 1e3, 3),
        "stages_ms": {label: round(ms, 3) for label, ms in per_search.items()},
        # (function, own CPU ms per search under the profiler, calls per search)
        "hottest_own": [(name, round(own / searches * 1e3, 3), round(calls / searches, 1)) for own, calls, name in hottest[:top]],
    }


def _scenario(workdir: Path, name: str, req: pb.SearchMemoryRequest) -> Path:
    from google.protobuf import json_format

    path = workdir / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "call": "memoryd.v1.VectorService/SearchMemory",
                "concurrency": CONCURRENCY,
                "connections": 4,
                "metadata": {"authorization": f"Bearer {vector_load.TENANTS['load-a']}"},
                "data": json_format.MessageToDict(req),
            }
        )
    )
    return path


def _reply_size(server: ServerProcess, req: pb.SearchMemoryRequest) -> tuple[int, int, int]:
    """(bytes, hits, context messages) of the server's answer to `req`."""
    import grpc

    from memoryd.v1 import vector_service_pb2_grpc

    with grpc.insecure_channel(server.target) as channel:
        reply = vector_service_pb2_grpc.VectorServiceStub(channel).SearchMemory(
            req, metadata=(("authorization", f"Bearer {vector_load.TENANTS['load-a']}"),), timeout=30
        )
    return reply.ByteSize(), len(reply.hits), sum(len(h.before) + len(h.after) for h in reply.hits)


class _EngineClockFile:
    """The engine process's clock (engine_clock/sitecustomize.py): its totals, on request."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self, engine_pid: int) -> float:
        self.path.unlink(missing_ok=True)
        os.kill(engine_pid, signal.SIGUSR2)
        deadline = time.monotonic() + 10
        while not self.path.exists():
            if time.monotonic() > deadline:
                raise RuntimeError("the engine process did not report its clock (engine_clock/sitecustomize.py)")
            time.sleep(0.01)
        return sum(json.loads(self.path.read_text()).values())


def _measure(server: ServerProcess, path: Path, duration: float, clock: _EngineClockFile | None = None) -> dict:
    engine = next(iter(_children(server.pid)), None)
    main_before = tree_cpu_seconds(server.pid) - (tree_cpu_seconds(engine) if engine else 0.0)
    engine_before = tree_cpu_seconds(engine) if engine else 0.0
    queries_before = clock.read(engine) if clock and engine else 0.0
    result = run_ghz(path, server.target, target=path.stem, duration=duration, cpus=1)
    queries = (clock.read(engine) if clock and engine else 0.0) - queries_before
    engine_cpu = (tree_cpu_seconds(engine) if engine else 0.0) - engine_before
    main_cpu = tree_cpu_seconds(server.pid) - (tree_cpu_seconds(engine) if engine else 0.0) - main_before
    calls = max(result.count, 1)
    measured = {
        "rps": round(result.rps, 1),
        "calls": result.count,
        "errors": result.errors,
        "p50_ms": round(result.p50_ms, 2),
        "p99_ms": round(result.p99_ms, 2),
        "main_ms": round(main_cpu / calls * 1e3, 3),
        "engine_process_ms": round(engine_cpu / calls * 1e3, 3),
        "whole_ms": round((main_cpu + engine_cpu) / calls * 1e3, 3),
    }
    if clock is not None:
        measured["engine_ms"] = round(queries / calls * 1e3, 3)
        measured["whole_over_engine"] = round((main_cpu + engine_cpu) / max(queries, 1e-9), 2)
    return measured


def served(workdir: Path, data_dir: Path, duration: float, rounds: int) -> dict:
    """Phase 3: memoryd over gRPC, `rounds` times the caller's vector and then the server's
    embedder, the engine's query calls timed in its engine process meanwhile; then the
    do-nothing servicer."""
    ensure_ghz()
    caller, text_only = request(), request(with_vector=False)
    caller_path = _scenario(workdir, "hybrid_cw2_caller_vector", caller)
    embedder_path = _scenario(workdir, "hybrid_cw2_server_embedder", text_only)
    embedder = ServerProcess(
        [sys.executable, str(HERE / "embed_server.py"), "--listen", "127.0.0.1:0", "--dims", str(vector_load.DIMS)],
        workdir,
        name="embed-server",
        cwd=REPO,
    )
    embedder.start()
    clock = _EngineClockFile(workdir / "engine-clock.json")
    env = {
        **vector_load.tokens_env(),
        "MEMORYD_EMBEDDER_URL": f"http://{embedder.target}/v1",
        "MEMORYD_EMBEDDER_MODEL": "load-embedder",
        "MEMORYD_EMBEDDER_MODEL_ID": vector_load.MAIN_MODEL,
        "PYTHONPATH": os.pathsep.join(p for p in (str(HERE / "engine_clock"), os.environ.get("PYTHONPATH")) if p),
        "BENCH_ENGINE_CLOCK": str(clock.path),
    }
    results: list[dict] = []
    try:
        with start_memoryd("memoryd-search", workdir, data_dir, env=env) as server:
            sizes = {"memoryd": _reply_size(server, caller)}
            for path in (caller_path, embedder_path):  # unmeasured: pages the shard in
                run_ghz(path, server.target, target="warm-up", duration=min(duration, 5.0), cpus=1)
            for n in range(rounds):
                _log(f"round {n + 1} of {rounds}: the caller's vector, then the server's embedder")
                by_vector = _measure(server, caller_path, duration, clock)
                by_text = _measure(server, embedder_path, duration, clock)
                results.append(
                    {
                        "caller_vector": by_vector,
                        "server_embedder": by_text,
                        "embedder_rate": round(by_text["rps"] / max(by_vector["rps"], 1e-9), 3),
                    }
                )
        _log("the do-nothing servicer")
        with start_noop(workdir) as noop:
            sizes["noop"] = _reply_size(noop, caller)
            ceiling = _measure(noop, caller_path, duration)
    finally:
        embedder.stop()
    for result in results:
        result["caller_vector_of_ceiling"] = round(result["caller_vector"]["rps"] / max(ceiling["rps"], 1e-9), 3)
    return {
        "rounds": results,
        "ceiling": ceiling,
        "reply_sizes": {k: {"bytes": b, "hits": h, "context": c} for k, (b, h, c) in sizes.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="keeps the seeded data between runs (default: a new temp dir)")
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--searches", type=int, default=300, help="searches one after another per engine and profile phase")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per ghz run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--top", type=int, default=12, help="functions listed by their own CPU")
    parser.add_argument("--phases", default="profile,served", help="profile, served, engine (one after another, in-process)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from memoryd import logs

    logs.configure("warning")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-search-"))
    workdir.mkdir(parents=True, exist_ok=True)
    label = f"{args.points // 1000}k"
    data_dir, seeding = vector_load.prepare(workdir, args.points, label, now_ms() - 30 * 86_400_000, _log)
    phases = set(args.phases.split(","))
    report: dict[str, Any] = {"points": args.points, "query_text": vector_load.query_text(), "seeding": seeding}
    if "engine" in phases:
        _log("the engine's CPU per search (in-process)")
        report["engine"] = asyncio.run(engine_split(data_dir, args.searches))
    if "profile" in phases:
        _log("profile: the engine in its own process, as served")
        report["profile"] = asyncio.run(profile(data_dir, args.searches, args.top))
    if "served" in phases:
        report["served"] = served(workdir, data_dir, args.duration, args.rounds)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
