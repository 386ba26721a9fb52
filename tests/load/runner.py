"""The load suite behind tests/load/run: every scenario against memoryd and the do-nothing ceiling.

Phases (each one bounded; durations from the environment, see tests/load/README.md):
  1. ceiling   - the ghz scenarios against tests/load/noop_server.py
  2. seed      - SQLite data: 100 history sessions, a small and a huge session, and a
                 window of recent messages of which 1% carry platform "rare"
  3. sqlite    - the same scenarios against memoryd (1 worker), the scaling pairs
                 (GetHistory small vs huge session, filtered vs unfiltered recent),
                 Watch fan-out, then SaveMessage (last, so reads see the seeded data only)
  4. workers   - GetHistory, SearchMemory and SaveMessage with --workers 1 and 2 (CPU per call)
  5. rss       - a long SaveMessage + GetHistory run, RSS at 10 s vs the end, then each
                 process's RSS settled LOAD_RSS_SETTLE s after it (peak and settled per process)
  5b. decay    - LOAD_DECAY_RUNS consecutive SaveMessage runs on one fresh server: the rate,
                 CPU and bytes written per call, and the SQLite WAL's size after each run
  6. mongo     - smaller sizes on the MongoDB adapter against SecantusDB
  7. vectors   - SearchMemory on Qdrant Edge at 100k (and LOAD_VECTOR_POINTS_BIG) points of
                 384 dimensions, batched UpsertVectors, startup time (vector_load.py)
Prints one table and the target checks; writes everything as JSON to $LOAD_OUT.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from loadlib import (
    HERE,
    SCENARIOS,
    GhzResult,
    RssSampler,
    SeedSpec,
    ServerProcess,
    env_float,
    env_int,
    free_port,
    human_bytes,
    human_kb,
    indexing_stats,
    measure,
    memoryd_supports,
    now_ms,
    role_anon_rss_bytes,
    role_rss_bytes,
    run_ghz,
    scenario_call,
    seed,
    seed_vectors,
    server_methods,
    start_memoryd,
    start_noop,
    which,
)

DURATION = env_float("LOAD_DURATION", 10)
RSS_DURATION = env_float("LOAD_RSS_DURATION", 60)
RSS_SETTLE = env_float("LOAD_RSS_SETTLE", 30)
DECAY_RUNS = env_int("LOAD_DECAY_RUNS", 10)
BIG = env_int("LOAD_BIG_MESSAGES", 1_000_000)
SMALL = env_int("LOAD_SMALL_MESSAGES", 1_000)
RECENT = env_int("LOAD_RECENT_MESSAGES", 50_000)
MONGO_BIG = env_int("LOAD_MONGO_BIG_MESSAGES", 10_000)
MONGO_RECENT = env_int("LOAD_MONGO_RECENT_MESSAGES", 5_000)
MONGO_DURATION = env_float("LOAD_MONGO_DURATION", DURATION)
GHZ_CPUS = env_int("LOAD_GHZ_CPUS", 1)
VECTORS = env_int("LOAD_VECTORS", 5_000)  # the 32-dimension search_memory scenario
VECTOR_POINTS = env_int("LOAD_VECTOR_POINTS", 100_000)
VECTOR_POINTS_BIG = env_int("LOAD_VECTOR_POINTS_BIG", 0)  # e.g. 1000000: adds the large run
MONGO_CONCURRENCY = env_int("LOAD_MONGO_CONCURRENCY", 4)
PHASES = set(os.environ.get("LOAD_PHASES", "ceiling,sqlite,workers,rss,decay,mongo,fanout,vectors").split(","))

# Which do-nothing scenario is the ceiling of each memoryd scenario.
CEILING_OF = {
    "save_message": "save_message",
    "get_history": "get_history",
    "get_history_1k": "get_history",
    "get_history_1m": "get_history",
    "recent_unfiltered": "recent_unfiltered",
    "recent_filtered": "recent_unfiltered",
    "recent_filtered_kind": "recent_unfiltered",
    "search_memory": "search_memory",
}


def log(text: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {text}", file=sys.stderr, flush=True)


def scenario(name: str) -> Path:
    return SCENARIOS / f"{name}.json"


class Suite:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.results: list[GhzResult] = []
        self.ceiling: dict[str, float] = {}  # noop with memoryd-shaped responses
        self.bare_ceiling: dict[str, float] = {}  # noop with empty responses
        self.extra: dict[str, object] = {}
        self.skipped: list[str] = []
        self.seed_now = now_ms()

    # -- running --------------------------------------------------------
    def ghz(
        self,
        server: ServerProcess,
        name: str,
        target: str,
        *,
        duration: float = DURATION,
        label: str | None = None,
        concurrency: int | None = None,
    ) -> GhzResult | None:
        path = scenario(name)
        if scenario_call(path) not in self.methods(server):
            self.skipped.append(f"{label or name} on {target}: {scenario_call(path)} not served")
            log(f"skip {name} on {target}: {scenario_call(path)} not served")
            return None
        log(f"{label or name} on {target} for {duration:g}s")
        result = measure(server, path, target=target, duration=duration, cpus=GHZ_CPUS, concurrency=concurrency)
        result.scenario = label or name
        if target == "noop":
            self.ceiling[name] = result.rps
        elif target == "noop-empty":
            self.bare_ceiling[name] = result.rps
        else:
            result.ceiling_rps = self.ceiling.get(CEILING_OF.get(name, name))
            result.bare_ceiling_rps = self.bare_ceiling.get(CEILING_OF.get(name, name))
        self.results.append(result)
        return result

    def ghz_path(self, server: ServerProcess, path: Path, name: str, target: str) -> GhzResult:
        """A generated scenario; its ceiling is the same file against the do-nothing servicer."""
        log(f"{name} on {target} for {DURATION:g}s")
        result = measure(server, path, target=target, duration=DURATION, cpus=GHZ_CPUS)
        result.scenario = name
        if target == "noop":
            self.ceiling[name] = result.rps
        else:
            result.ceiling_rps = self.ceiling.get(name)
        self.results.append(result)
        return result

    def methods(self, server: ServerProcess) -> set[str]:
        cache = getattr(server, "_methods", None)
        if cache is None:
            cache = server_methods(server.target)
            server._methods = cache  # type: ignore[attr-defined]
        return cache

    # -- phases ---------------------------------------------------------
    def run_ceiling(self) -> None:
        for target, responses in (("noop", "shaped"), ("noop-empty", "empty")):
            with start_noop(self.workdir, responses) as noop:
                for name in ("save_message", "get_history", "recent_unfiltered", "search_memory"):
                    self.ghz(noop, name, target)

    def seed_specs(self, big: int, recent: int) -> list[SeedSpec]:
        now = self.seed_now
        day = 86_400_000
        return [
            # Old data first: it must not show up among recent messages.
            SeedSpec("load-big-large", 1, big, now - 40 * day),
            SeedSpec("load-big-small", 1, SMALL, now - 39 * day),
            SeedSpec("load-hist-", 100, 200, now - 30 * day),
            # The newest window: what GetRecentAcrossSessions scans; 1 in 100 is "rare".
            SeedSpec("load-recent-", 500, max(1, recent // 500), now - 2 * day, rare_every=100),
        ]

    def seed_into(self, server: ServerProcess, specs: list[SeedSpec], key: str, *, batch: int = 1000, concurrency: int = 2) -> None:
        started = time.monotonic()
        total = seed(server.target, specs, batch=batch, concurrency=concurrency)
        if "memoryd.v1.VectorService/UpsertVectors" in self.methods(server) and VECTORS:
            self.extra[f"vectors_{key}"] = seed_vectors(server.target, VECTORS, self.seed_now - 30 * 86_400_000)
        elapsed = time.monotonic() - started
        self.extra[f"seed_{key}"] = {"messages": total, "seconds": round(elapsed, 1)}
        log(f"seeded {total} messages in {elapsed:.0f}s ({total / max(elapsed, 1e-9):.0f}/s)")

    def run_memoryd(
        self,
        target: str,
        data_dir: Path,
        extra_args: list[str],
        *,
        big: int,
        fanout: bool,
        duration: float = DURATION,
        concurrency: int | None = None,
    ) -> None:
        with start_memoryd(f"memoryd-{target}", self.workdir, data_dir, *extra_args) as server:
            run = functools.partial(self.ghz, server, target=target, duration=duration, concurrency=concurrency)
            run("get_history")
            run("get_history_1k", label=f"get_history_{human_count(SMALL)}")
            run("get_history_1m", label=f"get_history_{human_count(big)}")
            run("recent_unfiltered")
            run("recent_filtered")
            run("recent_filtered_kind")
            run("search_memory")
            if fanout and "fanout" in PHASES:
                self.run_fanout(server, target)
            run("save_message")
            if "memoryd.v1.VectorService/GetVectorStats" in self.methods(server):
                # Saved messages are keyword-indexed in the background (a bounded queue that
                # drops the oldest): CPU per call compares only at equal work done.
                self.extra[f"indexing_{target}"] = indexing_stats(server.target)

    def run_fanout(self, server: ServerProcess, target: str) -> None:
        subscribers = env_int("LOAD_FANOUT_SUBSCRIBERS", 20)
        rate = env_float("LOAD_FANOUT_RATE", 100)
        log(f"watch fan-out on {target}: {subscribers} subscribers, {rate:g} writes/s for {DURATION:g}s")
        with RssSampler(server.pid) as rss:
            completed = subprocess.run(
                [
                    sys.executable,
                    str(HERE / "watch_fanout.py"),
                    "--target",
                    server.target,
                    "--subscribers",
                    str(subscribers),
                    "--rate",
                    str(rate),
                    "--duration",
                    str(DURATION),
                ],
                capture_output=True,
                text=True,
                timeout=DURATION + 60,
            )
        if completed.returncode != 0:
            log(f"fan-out failed: {completed.stderr.strip()[-500:]}")
            self.extra[f"fanout_{target}"] = {"error": completed.stderr.strip()[-500:]}
            return
        report = json.loads(completed.stdout)
        report["peak_rss"] = rss.peak
        self.extra[f"fanout_{target}"] = report

    def run_workers(self, data_dir: Path) -> None:
        """1 vs 2 workers on the embedded default (the workers share one vector engine process);
        CPU per call in depth, background indexing included: bench_workers.py."""
        if not memoryd_supports("--workers"):
            self.skipped.append("workers: memoryd serve has no --workers flag")
            return
        for workers in (1, 2):
            target = f"sqlite-{workers}w-workers"
            with start_memoryd(f"memoryd-{target}", self.workdir, data_dir, "--workers", str(workers)) as server:
                self.ghz(server, "get_history", target)
                self.ghz(server, "search_memory", target)
                self.ghz(server, "save_message", target)

    def run_rss(self, data_dir: Path) -> None:
        """SaveMessage and GetHistory together for RSS_DURATION s; RSS at 10 s vs at the end."""
        log(f"rss: save+history for {RSS_DURATION:g}s")
        with start_memoryd("memoryd-rss", self.workdir, data_dir) as server, RssSampler(server.pid, 1.0) as rss:
            out: dict[str, GhzResult] = {}

            def drive(name: str) -> None:
                out[name] = run_ghz(
                    scenario(name), server.target, target="sqlite-rss", duration=RSS_DURATION, concurrency=8, cpus=GHZ_CPUS
                )

            threads = [threading.Thread(target=drive, args=(n,)) for n in ("save_message", "get_history")]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            log(f"rss: settling for {RSS_SETTLE:g}s")
            time.sleep(RSS_SETTLE)
            settled, settled_anon = role_rss_bytes(server.pid), role_anon_rss_bytes(server.pid)
        early, late = rss.at(10), rss.at(RSS_DURATION)
        self.extra["rss"] = {
            "seconds": RSS_DURATION,
            "rss_10s": early,
            "rss_end": late,
            "peak_by_process": dict(rss.peaks),
            "settled_by_process": settled,
            "settled_anon_by_process": settled_anon,
            "settle_seconds": RSS_SETTLE,
            "growth": (late - early) / early if early else None,
            "save_rps": round(out["save_message"].rps, 1),
            "history_rps": round(out["get_history"].rps, 1),
            "errors": out["save_message"].errors + out["get_history"].errors,
            "samples": [(round(t, 1), r) for t, r in rss.samples],
        }

    def run_decay(self) -> None:
        """DECAY_RUNS consecutive save_message runs of DURATION s on one fresh server (its own
        data directory): whether the rate holds over a server's life, and what each call writes."""
        data_dir = self.workdir / "decay-data"
        runs = []
        with start_memoryd("memoryd-decay", self.workdir, data_dir) as server:
            for n in range(DECAY_RUNS):
                log(f"decay: save_message run {n + 1} of {DECAY_RUNS}")
                r = measure(server, scenario("save_message"), target="sqlite-decay", duration=DURATION, cpus=GHZ_CPUS)
                wal = data_dir / "memoryd.db-wal"
                runs.append(
                    {
                        "rps": round(r.rps, 1),
                        "errors": r.errors,
                        "cpu_ms_per_call": round(r.cpu_per_call_ms, 3),
                        "written_per_call": round(r.written_per_call),
                        "wal_bytes": wal.stat().st_size if wal.exists() else 0,
                        "peak_rss_by_process": r.peak_rss_by_process,
                    }
                )
        first = runs[0]["rps"] if runs else 0
        self.extra["decay"] = {
            "seconds": DURATION,
            "runs": runs,
            "rps_vs_first": [round(run["rps"] / first, 3) if first else None for run in runs],
        }

    def run_mongo(self) -> None:
        external = os.environ.get("LOAD_MONGODB_URI")
        if external:
            self.run_mongo_at(external, "mongo-external")
            return
        secantus = which("secantusd-py")
        if secantus is None:
            self.skipped.append("mongo: secantusd-py not installed (pip install secantusdb)")
            return
        if not memoryd_supports("--mongodb-uri"):
            self.skipped.append("mongo: memoryd serve has no --mongodb-uri flag")
            return
        port = free_port()
        storage = self.workdir / "secantus"
        storage.mkdir(exist_ok=True)
        log(f"starting SecantusDB on {port}")
        log_file = open(self.workdir / "secantus.log", "ab")
        db = subprocess.Popen([secantus, "--port", str(port), "--storage-path", str(storage)], stdout=log_file, stderr=subprocess.STDOUT)
        log_file.close()
        try:
            wait_tcp(port, 60)
            self.run_mongo_at(f"mongodb://127.0.0.1:{port}/?directConnection=true", "mongo-secantus")
        finally:
            db.terminate()
            try:
                db.wait(20)
            except subprocess.TimeoutExpired:
                db.kill()


    def run_mongo_at(self, uri: str, target: str) -> None:
        data_dir = self.workdir / f"{target}-data"
        # A fresh database per run, so an external server is never mixed with older load data.
        args = ["--mongodb-uri", uri, "--mongodb-database", f"memoryd_load_{int(time.time())}"]
        with start_memoryd(f"memoryd-{target}-seed", self.workdir, data_dir, *args) as server:
            # Smaller batches than on SQLite stay inside memoryd's storage timeout on slow servers.
            self.seed_into(server, self.seed_specs(MONGO_BIG, MONGO_RECENT), "mongo", batch=200, concurrency=1)
        self.run_memoryd(
            target, data_dir, args, big=MONGO_BIG, fanout=False, duration=MONGO_DURATION, concurrency=MONGO_CONCURRENCY
        )


def wait_tcp(port: int, timeout: float) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"nothing listens on {port} after {timeout}s")


def human_count(n: object) -> str:
    n = int(n)  # type: ignore[arg-type]
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}m"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


# --------------------------------------------------------------------------- report


def table(results: list[GhzResult]) -> str:
    header = (
        "| scenario | target | RPS | p50 ms | p95 ms | p99 ms | errors | vs ceiling | vs empty ceiling "
        "| server CPU | CPU ms/call | written/call | peak RSS |"
    )
    lines = [header, "|" + "---|" * 13]
    for r in results:
        ratio = f"{r.ratio:.0%}" if r.ratio is not None else "-"
        bare = f"{r.rps / r.bare_ceiling_rps:.0%}" if r.bare_ceiling_rps else "-"
        lines.append(
            f"| {r.scenario} | {r.target} | {r.rps:,.0f} | {r.p50_ms:.2f} | {r.p95_ms:.2f} | {r.p99_ms:.2f} "
            f"| {r.errors} | {ratio} | {bare} | {r.server_cpu:.0%} | {r.cpu_per_call_ms:.2f} "
            f"| {human_kb(r.written_per_call)} | {human_bytes(r.peak_rss)} |"
        )
    return "\n".join(lines)


def find(results: list[GhzResult], scenario: str, target: str) -> GhzResult | None:
    return next((r for r in results if r.scenario == scenario and r.target == target), None)


def checks(suite: Suite) -> list[str]:
    out = []
    results = suite.results

    def verdict(ok: bool, *runs: GhzResult) -> str:
        if any(r.errors for r in runs):
            return "NOT MEASURED (calls failed)"
        return "MET" if ok else "MISSED"

    for name in ("save_message", "get_history"):
        r = find(results, name, "sqlite-1w")
        if r and r.ratio is not None:
            bare = f", {r.rps / r.bare_ceiling_rps:.0%} of the empty-response ceiling" if r.bare_ceiling_rps else ""
            out.append(
                f"{name} sqlite 1 worker >= 60% of ceiling, 0 errors: {r.ratio:.0%}{bare}, {r.errors} errors "
                f"-> {verdict(r.ratio >= 0.6, r)}"
            )
    for target, big_key in (("sqlite-1w", BIG), ("mongo-secantus", MONGO_BIG), ("mongo-external", MONGO_BIG)):
        small = find(results, f"get_history_{human_count(SMALL)}", target)
        large = find(results, f"get_history_{human_count(big_key)}", target)
        if small and large and large.rps:
            factor = small.rps / large.rps
            out.append(
                f"GetHistory {human_count(big_key)} within 1.5x of {human_count(SMALL)} ({target}): "
                f"{factor:.2f}x cost (mean {large.mean_ms:.2f} vs {small.mean_ms:.2f} ms) -> {verdict(factor <= 1.5, small, large)}"
            )
        unfiltered = find(results, "recent_unfiltered", target)
        for name, how in (("recent_filtered", "by platform"), ("recent_filtered_kind", "by kind")):
            filtered = find(results, name, target)
            if unfiltered and filtered and filtered.rps:
                factor = unfiltered.rps / filtered.rps
                out.append(
                    f"cross-session 99% filtered out {how} within 3x of unfiltered ({target}): {factor:.2f}x cost "
                    f"(mean {filtered.mean_ms:.2f} vs {unfiltered.mean_ms:.2f} ms) "
                    f"-> {verdict(factor <= 3, unfiltered, filtered)}"
                )
    out += vector_checks(suite)
    rss = suite.extra.get("rss")
    if isinstance(rss, dict) and rss.get("growth") is not None:
        out.append(
            f"RSS flat within 10% from 10 s to {rss['seconds']:g} s: {human_bytes(rss['rss_10s'])} -> "
            f"{human_bytes(rss['rss_end'])} ({rss['growth']:+.1%}), {rss['errors']} errors -> {verdict(abs(rss['growth']) <= 0.10)}"
        )
    if isinstance(rss, dict) and rss.get("settled_by_process"):
        peaks, settled = rss["peak_by_process"], rss["settled_by_process"]
        out.append(
            f"RSS per process, peak / settled {rss['settle_seconds']:g} s after the run: "
            + ", ".join(f"{role} {human_bytes(peaks.get(role, 0))} / {human_bytes(settled[role])}" for role in settled)
            + " (settled, of it anonymous: "
            + ", ".join(f"{role} {human_bytes(n)}" for role, n in rss.get("settled_anon_by_process", {}).items())
            + "; the rest are file pages mapped, which the kernel can drop)"
        )
    decay = suite.extra.get("decay")
    if isinstance(decay, dict) and decay.get("runs"):
        runs, ratios = decay["runs"], [r for r in decay["rps_vs_first"] if r is not None]
        out.append(
            f"SaveMessage over {len(runs)} consecutive {decay['seconds']:g} s runs on one server: RPS "
            + " ".join(f"{run['rps']:,.0f}" for run in runs)
            + (f" (min {min(ratios):.2f}x, max {max(ratios):.2f}x of the first)" if ratios else "")
            + "; written per call "
            + " ".join(human_kb(run["written_per_call"]) for run in runs)
            + f"; WAL after the last {human_bytes(runs[-1]['wal_bytes'])}"
            + (f" -> within 10%: {verdict(min(ratios) >= 0.9 and max(ratios) <= 1.1)}" if ratios else "")
        )
    for name in ("save_message", "get_history", "search_memory"):
        one, two = find(results, name, "sqlite-1w-workers"), find(results, name, "sqlite-2w-workers")
        if one and two and one.cpu_per_call_ms:
            factor = two.cpu_per_call_ms / one.cpu_per_call_ms
            out.append(
                f"{name} 1 vs 2 workers: CPU per call {one.cpu_per_call_ms:.2f} vs {two.cpu_per_call_ms:.2f} ms "
                f"({factor:.2f}x, within 10%: {verdict(factor <= 1.1, one, two)}); {one.rps:,.0f} vs {two.rps:,.0f} RPS"
            )
    return out


def vector_checks(suite: Suite) -> list[str]:
    out = []
    results = suite.results
    small, big = human_count(VECTOR_POINTS), human_count(VECTOR_POINTS_BIG) if VECTOR_POINTS_BIG else None
    base = find(results, "search_384_cw2", f"edge-{small}")
    if base and base.ratio is not None:
        cw0 = find(results, "search_384_cw0", f"edge-{small}")
        out.append(
            f"SearchMemory {small} x 384 (top_k 5, context 2) >= 40% of ceiling, 0 errors: {base.ratio:.0%}, "
            f"{base.errors} errors -> {'MET' if base.ratio >= 0.4 and not base.errors else 'MISSED'}"
            + (f" (context 0: {cw0.ratio:.0%} of its ceiling)" if cw0 and cw0.ratio is not None else "")
        )
        for name, what in (("search_384_model10", "model-filtered (10%)"), ("search_384_session", "session-scoped")):
            r = find(results, name, f"edge-{small}")
            if r and r.rps:
                factor = base.rps / r.rps
                out.append(f"{what} within 1.5x of unfiltered ({small}): {factor:.2f}x cost -> {'MET' if factor <= 1.5 else 'MISSED'}")
    if big:
        large = find(results, "search_384_cw2", f"edge-{big}")
        if base and large and large.rps:
            factor = base.rps / large.rps
            extra = suite.extra.get(f"vectors_{big}", {})
            out.append(
                f"SearchMemory {big} within 2x of {small}: {factor:.2f}x cost, peak RSS {human_bytes(large.peak_rss)}, "
                f"startup {extra.get('startup_seconds')} s -> {'MET' if factor <= 2 else 'MISSED'}"
            )
    for key, extra in suite.extra.items():
        if key.startswith("vectors_") and isinstance(extra, dict) and extra.get("upsert_points_per_s"):
            rate = extra["upsert_points_per_s"]
            out.append(f"batched UpsertVectors ({key.removeprefix('vectors_')}, 384 dims, batches of 500) >= 5,000 "
                       f"points/s: {rate:,} -> {'MET' if rate >= 5000 else 'MISSED'}")
    return out


def fanout_lines(suite: Suite) -> list[str]:
    lines = []
    for key, report in suite.extra.items():
        if key.startswith("fanout_") and isinstance(report, dict) and "writes" in report:
            lines.append(
                f"Watch fan-out ({key.removeprefix('fanout_')}): {report['subscribers']} subscribers, "
                f"{report['writes']} writes at {report['write_rps']}/s -> {report['deliveries']}/{report['expected_deliveries']} "
                f"delivered ({report['lost']} lost, {report['duplicates']} duplicates), latency p50 {report['delivery_p50_ms']} ms "
                f"p99 {report['delivery_p99_ms']} ms, {report['deliveries_per_s']} deliveries/s, {report['errors']} errors, "
                f"peak RSS {human_bytes(report['peak_rss'])}"
            )
    return lines


def machine() -> str:
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / (1 << 20):.1f} GiB RAM"
    except OSError:
        pass
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({cpu}), {mem}, {platform.platform()}, Python {platform.python_version()}"


def load_average() -> str:
    """Other work on the machine skews every number; the report says how busy it was."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main() -> int:
    workdir = Path(os.environ.get("LOAD_WORKDIR") or tempfile.mkdtemp(prefix="memoryd-load-"))
    workdir.mkdir(parents=True, exist_ok=True)
    suite = Suite(workdir)
    started = time.monotonic()
    log(f"workdir {workdir}; phases {sorted(PHASES)}; {DURATION:g}s per scenario; load average {load_average()}")
    load_before = load_average()
    sqlite_dir = workdir / "sqlite-data"
    if "ceiling" in PHASES:
        suite.run_ceiling()
    def phase(name: str, run) -> None:
        if name not in PHASES:
            return
        try:
            run()
        except Exception as exc:  # the other phases' numbers still count; say what failed
            log(f"{name} phase failed: {exc}")
            suite.skipped.append(f"{name}: failed: {str(exc)[:300]}")

    def sqlite_phase() -> None:
        # Seeding 1M messages takes minutes: a workdir seeded with the same sizes is reused.
        marker = sqlite_dir / f"seeded-v2-{BIG}-{SMALL}-{RECENT}-{VECTORS}"
        if marker.exists():
            suite.seed_now = int(marker.read_text())
            log(f"reusing seeded data in {sqlite_dir}")
        else:
            with start_memoryd("memoryd-seed", workdir, sqlite_dir) as server:
                suite.seed_into(server, suite.seed_specs(BIG, RECENT), "sqlite")
            marker.write_text(str(suite.seed_now))
        suite.run_memoryd("sqlite-1w", sqlite_dir, [], big=BIG, fanout=True)

    phase("sqlite", sqlite_phase)
    phase("workers", lambda: suite.run_workers(sqlite_dir))
    phase("rss", lambda: suite.run_rss(sqlite_dir))
    phase("decay", suite.run_decay)
    phase("mongo", suite.run_mongo)

    def vectors_phase() -> None:
        import vector_load

        vector_load.run(suite, VECTOR_POINTS, human_count(VECTOR_POINTS), log)
        if VECTOR_POINTS_BIG:
            vector_load.run(suite, VECTOR_POINTS_BIG, human_count(VECTOR_POINTS_BIG), log)

    phase("vectors", vectors_phase)
    elapsed = time.monotonic() - started

    print()
    print(f"memoryd load suite, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {elapsed / 60:.1f} min")
    print(f"machine: {machine()}")
    print(f"load average (1/5/15 min) before: {load_before}, after: {load_average()} (the suite itself adds about 2)")
    print(f"ghz: {GHZ_CPUS} CPU(s), {DURATION:g}s per scenario (concurrency and data: tests/load/scenarios/*.json)")
    print(f"sizes: SQLite big session {BIG:,} vs {SMALL:,}, recent window {RECENT:,}; "
          f"MongoDB (SecantusDB) big session {MONGO_BIG:,}, recent window {MONGO_RECENT:,}")
    print()
    print(table(suite.results))
    print()
    for line in fanout_lines(suite):
        print(line)
    for line in checks(suite):
        print(line)
    for line in suite.skipped:
        print(f"skipped: {line}")
    for key in ("seed_sqlite", "seed_mongo"):
        if key in suite.extra:
            print(f"{key}: {suite.extra[key]}")
    for key, extra in suite.extra.items():
        if key.startswith(("vectors_", "indexing_")):
            print(f"{key}: {extra}")
    out = Path(os.environ.get("LOAD_OUT") or workdir / "results.json")
    out.write_text(
        json.dumps(
            {
                "date": datetime.now(UTC).isoformat(),
                "machine": machine(),
                "results": [asdict(r) | {"ratio": r.ratio} for r in suite.results],
                "checks": checks(suite),
                "extra": suite.extra,
                "skipped": suite.skipped,
            },
            indent=2,
        )
    )
    print(f"\nfull results: {out}")
    errors = sum(r.errors for r in suite.results)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
