"""Plumbing shared by tests/load/run and tests/load/smoke: servers, RSS sampling, ghz, seeding."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from google.protobuf import struct_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from memoryd.v1 import memory_service_pb2, memory_service_pb2_grpc, message_pb2

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCENARIOS = HERE / "scenarios"
VENV_BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO))  # these scripts run from here: the repository's tests package
from tests import processes  # noqa: E402
from tests.processes import ServerProcess  # noqa: E402

GHZ = Path(os.environ.get("GHZ", REPO / "tools" / "bin" / "ghz"))


def env_float(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def run_bench(script: str, *args: str, timeout: float = processes.SMOKE_TIMEOUT) -> dict:
    """The JSON line a benchmark here prints last, run at the sizes `args` give (the toy-size
    tests of tests/load/test_bench_*.py: it still runs end to end; timings are not asserted)."""
    done = processes.run([sys.executable, str(HERE / script), *args], capture_output=True, text=True, timeout=timeout, cwd=HERE)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


# --------------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # Field 4 (ppid) follows the parenthesised command name, which may hold spaces.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == pid:
            found.append(int(entry))
    return found


def rss_bytes(pid: int) -> int:
    """Resident memory of one process (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of a process and all its descendants (workers count too)."""
    total = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        total += rss_bytes(current)
        stack.extend(_children(current))
    return total


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its descendants, in seconds."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
        stack.extend(_children(current))
    return total / ticks


def write_bytes(pid: int) -> int:
    """Bytes a process caused to be written to storage so far (/proc/<pid>/io write_bytes:
    counted when it dirties page-cache pages, so the file writes of its SQLite commits and
    checkpoints count, whenever the kernel flushes them); 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/io") as f:
            for line in f:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_write_bytes(pid: int) -> int:
    """write_bytes of a process and all its descendants (workers, the vector engine)."""
    total = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        total += write_bytes(current)
        stack.extend(_children(current))
    return total


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _is_engine(command: str) -> bool:
    return "memoryd.engine" in command or "edge_process" in command


def process_roles(pid: int) -> dict[str, list[int]]:
    """The processes of a memoryd serve tree by role: `serving` (the process started; with
    --workers the parent), `engine` (the vector engine process with its descendants),
    `worker1`.. (the other children, each with its descendants, in pid order)."""
    roles: dict[str, list[int]] = {"serving": [pid]}
    workers = 0
    for child in sorted(_children(pid)):
        tree, stack = [], [child]
        while stack:
            current = stack.pop()
            tree.append(current)
            stack.extend(_children(current))
        if _is_engine(_cmdline(child)):
            roles.setdefault("engine", []).extend(tree)
            continue
        engines = [p for p in tree[1:] if _is_engine(_cmdline(p))]  # a worker's own engine
        workers += 1
        roles[f"worker{workers}"] = [p for p in tree if p not in engines]
        if engines:
            roles.setdefault("engine", []).extend(engines)
    return roles


def role_rss_bytes(pid: int) -> dict[str, int]:
    """RSS of each role of a memoryd serve tree (process_roles)."""
    return {role: sum(rss_bytes(p) for p in pids) for role, pids in process_roles(pid).items()}


def anon_rss_bytes(pid: int) -> int:
    """The anonymous part of a process's RSS (RssAnon: heap, not file pages it maps, which
    the kernel can drop: the vector engine maps its segments and WAL); 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def role_anon_rss_bytes(pid: int) -> dict[str, int]:
    """RssAnon of each role of a memoryd serve tree (process_roles)."""
    return {role: sum(anon_rss_bytes(p) for p in pids) for role, pids in process_roles(pid).items()}


class RssSampler:
    """Samples a process tree's RSS every `interval` seconds in a thread: the tree's total
    (`samples`, `peak`) and each process role's (`peaks`, `last`: serving, engine, workers)."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        self.pid = pid
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self.peaks: dict[str, int] = {}
        self.last: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        start = time.monotonic()
        while not self._stop.is_set():
            roles = role_rss_bytes(self.pid)
            for role, rss in roles.items():
                self.peaks[role] = max(self.peaks.get(role, 0), rss)
            self.last = roles
            self.samples.append((time.monotonic() - start, sum(roles.values())))
            self._stop.wait(self.interval)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak(self) -> int:
        return max((rss for _, rss in self.samples), default=0)

    def at(self, second: float) -> int:
        """The sample nearest to `second` after start."""
        return min(self.samples, key=lambda s: abs(s[0] - second))[1] if self.samples else 0


def start_server(
    name: str, argv: Sequence[str], workdir: Path, *, env: dict | None = None, timeout: float = 60.0
) -> ServerProcess:
    """Start a server that accepts `--port-file`; wait until it has written it and answers."""
    server = ServerProcess(argv, workdir, name=name, env=env, cwd=REPO)
    server.start(timeout)
    deadline = time.monotonic() + timeout
    while not _answers(server.target):
        if server.process.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise RuntimeError(f"{name} does not answer; log: {server.log_path}\n{tail(server.log_path)}")
    return server


def tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _answers(address: str) -> bool:
    try:
        with grpc.insecure_channel(address) as channel:
            grpc.channel_ready_future(channel).result(timeout=2)
            return True
    except grpc.FutureTimeoutError:
        return False


def start_memoryd(name: str, workdir: Path, data_dir: Path, *extra: str, env: dict | None = None) -> ServerProcess:
    argv = [str(VENV_BIN / "memoryd"), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), *extra]
    return start_server(name, argv, workdir, env=env)


def start_noop(workdir: Path, responses: str = "shaped") -> ServerProcess:
    argv = [sys.executable, str(HERE / "noop_server.py"), "--listen", "127.0.0.1:0", "--responses", responses]
    return start_server(f"noop-{responses}", argv, workdir)


def memoryd_supports(flag: str) -> bool:
    result = processes.run([str(VENV_BIN / "memoryd"), "serve", "--help"], capture_output=True, text=True)
    return flag in result.stdout


def server_methods(address: str) -> set[str]:
    """Fully qualified `package.Service/Method` names the server offers, by reflection."""
    with grpc.insecure_channel(address) as channel:
        db = ProtoReflectionDescriptorDatabase(channel)
        methods = set()
        for service in db.get_services():
            try:
                file = db.FindFileContainingSymbol(service)
            except KeyError:
                continue
            for svc in file.service:
                for method in svc.method:
                    methods.add(f"{file.package}.{svc.name}/{method.name}")
        return methods


# --------------------------------------------------------------------------- ghz


def ensure_ghz() -> Path:
    if GHZ.exists():
        return GHZ
    processes.run([str(HERE / "install-ghz")], check=True)
    return GHZ


@dataclass
class GhzResult:
    scenario: str
    target: str
    rps: float = 0.0
    count: int = 0
    p50_ms: float = 0.0
    p95_ms: float = 0.0
    p99_ms: float = 0.0
    mean_ms: float = 0.0
    errors: int = 0
    error_samples: dict = field(default_factory=dict)
    peak_rss: int = 0
    peak_rss_by_process: dict = field(default_factory=dict)  # role -> bytes (process_roles)
    written_per_call: float = 0.0  # bytes the server tree wrote to storage per answered call
    server_cpu: float = 0.0  # server CPU seconds per wall second during the run (1.0 = one core)
    ceiling_rps: float | None = None
    bare_ceiling_rps: float | None = None

    @property
    def ratio(self) -> float | None:
        return self.rps / self.ceiling_rps if self.ceiling_rps else None

    @property
    def cpu_per_call_ms(self) -> float:
        """Server CPU (its whole process tree: workers, vector engine) per answered call."""
        return self.server_cpu / self.rps * 1000 if self.rps else 0.0


def scenario_call(path: Path) -> str:
    return json.loads(path.read_text())["call"]


def run_ghz(
    scenario: Path,
    address: str,
    *,
    target: str,
    duration: float,
    concurrency: int | None = None,
    cpus: int | None = None,
    extra: Sequence[str] = (),
    output: Path | None = None,
) -> GhzResult:
    """Run one ghz config against `address` for `duration` seconds and parse its JSON report."""
    argv = [
        str(ensure_ghz()),
        "--config",
        str(scenario),
        "--insecure",
        "-z",
        f"{duration}s",
        # Let calls in flight at the end finish instead of counting them as errors.
        "--duration-stop",
        "wait",
        "--format",
        "json",
    ]
    if concurrency:
        argv += ["--concurrency", str(concurrency)]
    if cpus:
        argv += ["--cpus", str(cpus)]
    argv += [*extra, address]
    completed = processes.run(argv, capture_output=True, text=True)
    if output is not None:
        output.write_text(completed.stdout)
    try:
        report = json.loads(completed.stdout)
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"ghz failed ({completed.returncode}): {completed.stderr.strip() or completed.stdout[:500]}") from exc
    latencies = {int(d["percentage"]): d["latency"] / 1e6 for d in report.get("latencyDistribution") or []}
    statuses = report.get("statusCodeDistribution") or {}
    errors = sum(n for code, n in statuses.items() if code != "OK")
    return GhzResult(
        scenario=scenario.stem,
        target=target,
        rps=report.get("rps", 0.0),
        count=report.get("count", 0),
        p50_ms=latencies.get(50, 0.0),
        p95_ms=latencies.get(95, 0.0),
        p99_ms=latencies.get(99, 0.0),
        mean_ms=report.get("average", 0) / 1e6,
        errors=errors,
        error_samples=report.get("errorDistribution") or {},
    )


def measure(server: ServerProcess, scenario: Path, *, target: str, duration: float, **kwargs) -> GhzResult:
    """ghz against a harness-started server, with the server tree's peak RSS during the run."""
    cpu_before, wall_before = tree_cpu_seconds(server.pid), time.monotonic()
    written_before = tree_write_bytes(server.pid)
    with RssSampler(server.pid) as rss:
        result = run_ghz(scenario, server.target, target=target, duration=duration, **kwargs)
    result.server_cpu = (tree_cpu_seconds(server.pid) - cpu_before) / (time.monotonic() - wall_before)
    result.written_per_call = (tree_write_bytes(server.pid) - written_before) / result.count if result.count else 0.0
    result.peak_rss = rss.peak
    result.peak_rss_by_process = dict(rss.peaks)
    return result


# --------------------------------------------------------------------------- seeding

CONTENT = (
    "Load-test message {n}: the quick brown fox jumps over the lazy dog while the agent "
    "remembers what the user said about their travel plans."
)


def _message(n: int, timestamp: int, *, role: str, platform: str, kind: str | None) -> message_pb2.Message:
    metadata = struct_pb2.Struct()
    metadata.update({"platform": platform, "sender": {"id": f"user-{n % 97}"}})
    return message_pb2.Message(role=role, content=CONTENT.format(n=n), timestamp=timestamp, metadata=metadata, kind=kind)


@dataclass
class SeedSpec:
    """Sessions to create: `count` messages each, timestamps from `start_ts` one ms apart.

    `rare_every`: every n-th message (across all sessions of the spec, in time order)
    gets platform "rare" and kind "rare", the rest platform "common" and kind "chat" —
    the 1% a filtered query looks for. Specs without it store no kind.
    Sessions are interleaved in time, as concurrent conversations are.
    """

    prefix: str
    sessions: int
    count: int
    start_ts: int
    rare_every: int = 0


async def _save_batches(address: str, batches, concurrency: int) -> int:
    saved = 0
    queue: asyncio.Queue = asyncio.Queue(maxsize=concurrency * 2)

    async with grpc.aio.insecure_channel(
        address, options=[("grpc.max_send_message_length", 64 << 20), ("grpc.max_receive_message_length", 64 << 20)]
    ) as channel:
        stub = memory_service_pb2_grpc.MemoryServiceStub(channel)

        async def worker() -> None:
            nonlocal saved
            while (item := await queue.get()) is not None:
                session_id, messages = item
                await stub.SaveMessages(
                    memory_service_pb2.SaveMessagesRequest(session_id=session_id, messages=messages), timeout=120
                )
                saved += len(messages)

        workers = [asyncio.create_task(worker()) for _ in range(concurrency)]
        try:
            for item in batches:
                await queue.put(item)
                if any(w.done() for w in workers):
                    break
            for _ in workers:
                await queue.put(None)
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
    return saved


def _batches(spec: SeedSpec, batch: int):
    """Per session, in timestamp order, SaveMessages batches of at most `batch`."""
    total = spec.sessions * spec.count
    pending: dict[str, list] = {}
    for n in range(total):
        session = f"{spec.prefix}{n % spec.sessions}" if spec.sessions > 1 else spec.prefix
        rare = bool(spec.rare_every) and n % spec.rare_every == spec.rare_every - 1
        platform = "rare" if rare else "common"
        kind = ("rare" if rare else "chat") if spec.rare_every else None
        role = "user" if n % 2 == 0 else "assistant"
        pending.setdefault(session, []).append(_message(n, spec.start_ts + n, role=role, platform=platform, kind=kind))
        if len(pending[session]) >= batch:
            yield session, pending.pop(session)
    yield from pending.items()


def seed(address: str, specs: Sequence[SeedSpec], *, batch: int = 1000, concurrency: int = 2) -> int:
    """Save every spec's messages through SaveMessages; returns the number saved."""
    total = 0
    for spec in specs:
        total += asyncio.run(_save_batches(address, _batches(spec, batch), concurrency))
    return total


SEARCH_MODEL = "load:test-32"
SEARCH_DIM = 32


async def _upsert_vectors(address: str, points: int, start_ts: int) -> int:
    import random

    from memoryd.v1 import vector_service_pb2, vector_service_pb2_grpc

    rng = random.Random(42)
    done = 0
    async with grpc.aio.insecure_channel(address) as channel:
        stub = vector_service_pb2_grpc.VectorServiceStub(channel)
        while done < points:
            batch = []
            for n in range(done, min(points, done + 500)):
                batch.append(
                    vector_service_pb2.VectorPoint(
                        model_id=SEARCH_MODEL,
                        vector=[rng.uniform(-1, 1) for _ in range(SEARCH_DIM)],
                        session_id=f"load-hist-{n % 100}",
                        timestamp=start_ts + n,
                        role="user" if n % 2 == 0 else "assistant",
                        platform="common",
                        sender_id=f"user-{n % 97}",
                        text=CONTENT.format(n=n),
                    )
                )
            await stub.UpsertVectors(vector_service_pb2.UpsertVectorsRequest(points=batch), timeout=120)
            done += len(batch)
    return done


def seed_vectors(address: str, points: int, start_ts: int) -> int:
    """Caller-supplied vectors for SearchMemory (near the load-hist-* sessions' timestamps)."""
    return asyncio.run(_upsert_vectors(address, points, start_ts))


def indexing_stats(address: str) -> dict:
    """What the background indexing kept up with (GetVectorStats of the default tenant)."""
    from memoryd.v1 import vector_service_pb2, vector_service_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        stats = vector_service_pb2_grpc.VectorServiceStub(channel).GetVectorStats(
            vector_service_pb2.GetVectorStatsRequest(), timeout=30
        )
    return {"keyword_points": stats.keyword_points, "queued": stats.index_queue_length}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def human_bytes(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB" if n else "-"


def human_kb(n: float) -> str:
    """Bytes per call, in kB (1,000 bytes)."""
    return f"{n / 1000:.1f} kB"


def which(name: str) -> str | None:
    candidate = VENV_BIN / name
    return str(candidate) if candidate.exists() else shutil.which(name)
