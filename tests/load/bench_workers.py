"""1 vs 2 workers on the embedded default: server CPU per call for GetHistory(50), SearchMemory
and SaveMessage (the load suite's ghz scenarios). Both servers run side by side, each on a copy
of one seeded data dir, and every scenario is measured on one and then the other, round after
round, so that a busy machine's drift meets both alike.

CPU per call is the CPU of memoryd's whole process tree (with --workers 2: the parent, both
workers and the vector engine process they share; with 1: the server and its engine child)
from the start of a scenario until its background work has settled (SaveMessage's keyword
indexing), less the tree's idle CPU over the same time, divided by the calls ghz completed.
Sharing a port, the SQLite file and the engine process should add nothing per call: the
target is 2 workers within 10% of 1. Scaling (RPS with more cores) is not what this measures:
ghz takes one core (`--cpus 1`) and the server the rest.

    .venv/bin/python tests/load/bench_workers.py [--workdir DIR] [--rounds 2] [--duration 8]   # ~4 min

Seeding (20,000 messages in 100 sessions, 5,000 vectors of 32 dims) is kept in --workdir.
Prints one JSON object per measurement on stderr as it goes and a Markdown table at the end.

`--scaling 1,2,4,8` measures scaling instead, on a machine with the cores for it: one server
at a time with N workers, each scenario at N times its concurrency and connections (ghz
`--ghz-cpus` cores for every N), RPS against one worker's. One prepared run of a few minutes
(docs/PERFORMANCE.md, "Scaling with cores"):

    .venv/bin/python tests/load/bench_workers.py --scaling 1,2,4,8 --ghz-cpus 6 --duration 6
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from loadlib import SCENARIOS, SeedSpec, _children, measure, now_ms, seed, seed_vectors, start_memoryd, tree_cpu_seconds

SCENARIO_NAMES = ("get_history", "search_memory", "save_message")
IDLE_SECONDS = 2.0
SETTLE_BOUND_SECONDS = 60.0


def _engine_cpu_seconds(pid: int) -> float:
    """The CPU of the tree's vector engine processes (and their index builders)."""
    total, stack = 0.0, [pid]
    while stack:
        current = stack.pop()
        try:
            command = Path(f"/proc/{current}/cmdline").read_bytes()
        except OSError:
            continue
        if b"memoryd.engine" in command or b"memoryd.storage.qdrant.edge_process" in command:
            total += tree_cpu_seconds(current)
        else:
            stack.extend(_children(current))
    return total


def _idle_rate(pid: int, seconds: float = IDLE_SECONDS) -> float:
    before = tree_cpu_seconds(pid)
    time.sleep(seconds)
    return (tree_cpu_seconds(pid) - before) / seconds


def _settle(pid: int, idle: float) -> None:
    """Until the tree's CPU falls back to (about) its idle rate: background work done."""
    deadline = time.monotonic() + SETTLE_BOUND_SECONDS
    while time.monotonic() < deadline:
        if _idle_rate(pid, 1.0) <= max(2 * idle, 0.03):
            return


def seed_data(workdir: Path, messages: int, vectors: int) -> Path:
    """GetHistory's 100 sessions of `messages` each, SearchMemory's `vectors` (the load suite's)."""
    data_dir = workdir / "data"
    marker = data_dir / f"seeded-bench-workers-v1-{messages}-{vectors}"
    if marker.exists():
        return data_dir
    now = now_ms()
    with start_memoryd("memoryd-seed", workdir, data_dir) as server:
        seed(server.target, [SeedSpec("load-hist-", 100, messages, now - 30 * 86_400_000)])
        seed_vectors(server.target, vectors, now - 30 * 86_400_000)
        _settle(server.pid, _idle_rate(server.pid))
    marker.write_text(str(now))
    return data_dir


def run(
    workdir: Path, rounds: int, duration: float, messages: int = 200, vectors: int = 5_000, *,
    scenarios: tuple[str, ...] = SCENARIO_NAMES, env: dict[str, str] | None = None,
) -> list[dict]:
    """Both servers run side by side (each on its own copy of the seeded data dir) and the
    measurements alternate between them scenario by scenario, so that both meet the same load
    from the rest of the machine. `env`: server settings (MEMORYD_*) of the measured servers."""
    seeded = seed_data(workdir, messages, vectors)
    rows = []
    with contextlib.ExitStack() as servers:
        started = {}
        for workers in (1, 2):
            data_dir = workdir / f"data-{workers}w"
            shutil.rmtree(data_dir, ignore_errors=True)
            shutil.copytree(seeded, data_dir)
            started[workers] = servers.enter_context(
                start_memoryd(f"memoryd-{workers}w", workdir, data_dir, "--workers", str(workers), env=env)
            )
        for server in started.values():
            _settle(server.pid, 0.0)  # the start's own work (opening shards) first
        for round_ in range(1, rounds + 1):
            for name in scenarios:
                for workers, server in started.items():
                    rows.append(_measure(server, name, workers, round_, duration))
    return rows


def scaling(
    workdir: Path, counts: tuple[int, ...], duration: float, ghz_cpus: int, messages: int = 200,
    vectors: int = 5_000, *, scenarios: tuple[str, ...] = SCENARIO_NAMES, env: dict[str, str] | None = None,
) -> list[dict]:
    """One server at a time with N workers (N of `counts`), every scenario at N times its
    concurrency over N times its connections, ghz on `ghz_cpus` cores throughout."""
    seeded = seed_data(workdir, messages, vectors)
    rows = []
    for workers in counts:
        data_dir = workdir / f"data-scaling-{workers}w"
        shutil.rmtree(data_dir, ignore_errors=True)
        shutil.copytree(seeded, data_dir)
        with start_memoryd(f"memoryd-{workers}w", workdir, data_dir, "--workers", str(workers), env=env) as server:
            _settle(server.pid, 0.0)
            for name in scenarios:
                load = json.loads((SCENARIOS / f"{name}.json").read_text())
                rows.append(_measure(
                    server, name, workers, 1, duration, cpus=ghz_cpus,
                    concurrency=load["concurrency"] * workers, extra=("--connections", str(load["connections"] * workers)),
                ))  # fmt: skip
        shutil.rmtree(data_dir, ignore_errors=True)
    return rows


def scaling_table(rows: list[dict]) -> str:
    counts = sorted({r["workers"] for r in rows})
    lines = [
        "| RPC (ghz scenario) | " + " | ".join(f"{n} worker{'s' if n > 1 else ''}: RPS (x one), CPU ms/call" for n in counts) + " | errors |",
        "|---|" + "---|" * len(counts) + "---|",
    ]
    for name in dict.fromkeys(r["scenario"] for r in rows):
        by = {r["workers"]: r for r in rows if r["scenario"] == name}
        one = by[counts[0]]["rps"] or 1.0
        cells = [f"{by[n]['rps']:,.0f} ({by[n]['rps'] / one:.2f}x), {by[n]['cpu_ms_per_call']}" for n in counts]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {sum(r['errors'] for r in by.values())} |")
    return "\n".join(lines)


def _measure(server, name: str, workers: int, round_: int, duration: float, *, cpus: int = 1, **ghz) -> dict:
    idle = _idle_rate(server.pid)
    cpu, engine_cpu, started = tree_cpu_seconds(server.pid), _engine_cpu_seconds(server.pid), time.monotonic()
    result = measure(server, SCENARIOS / f"{name}.json", target=f"{workers}w", duration=duration, cpus=cpus, **ghz)
    _settle(server.pid, idle)
    elapsed = time.monotonic() - started
    spent = tree_cpu_seconds(server.pid) - cpu - idle * elapsed
    engine_cpu = _engine_cpu_seconds(server.pid) - engine_cpu
    row = {
        "round": round_, "workers": workers, "scenario": name, "calls": result.count,
        "errors": result.errors, "rps": round(result.rps, 1), "p50_ms": round(result.p50_ms, 2),
        "p99_ms": round(result.p99_ms, 2), "idle_cpu": round(idle, 3),
        "cpu_ms_per_call": round(spent / max(result.count, 1) * 1000, 3),
        "engine_ms_per_call": round(engine_cpu / max(result.count, 1) * 1000, 3),
        "peak_rss_mib": round(result.peak_rss / 2**20), "load_average": round(os.getloadavg()[0], 1),
    }  # fmt: skip
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def table(rows: list[dict]) -> str:
    lines = [
        "| RPC (ghz scenario) | CPU ms/call, 1 worker | CPU ms/call, 2 workers | 2 / 1 (median) | RPS 1 / 2 workers | errors |",
        "|---|---|---|---|---|---|",
    ]
    for name in dict.fromkeys(r["scenario"] for r in rows):
        one = [r for r in rows if r["scenario"] == name and r["workers"] == 1]
        two = [r for r in rows if r["scenario"] == name and r["workers"] == 2]
        factor = statistics.median(r["cpu_ms_per_call"] for r in two) / statistics.median(r["cpu_ms_per_call"] for r in one)
        lines.append(
            f"| {name} | {' / '.join(str(r['cpu_ms_per_call']) for r in one)} "
            f"| {' / '.join(str(r['cpu_ms_per_call']) for r in two)} | **{factor:.2f}** "
            f"| {_rates(one)} ; {_rates(two)} "
            f"| {sum(r['errors'] for r in one + two)} |"
        )
    return "\n".join(lines)


def _rates(rows: list[dict]) -> str:
    return " / ".join(f"{r['rps']:,.0f}" for r in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per scenario")
    parser.add_argument("--messages", type=int, default=200, help="per GetHistory session (100 sessions)")
    parser.add_argument("--vectors", type=int, default=5_000, help="SearchMemory's (32 dims)")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements here")
    parser.add_argument("--scenarios", default=",".join(SCENARIO_NAMES), help="comma-separated, of " + ", ".join(SCENARIO_NAMES))
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="a server setting (repeatable)")
    parser.add_argument("--scaling", default="", metavar="N,N,...", help="measure scaling over these worker counts instead")
    parser.add_argument("--ghz-cpus", type=int, default=1, help="cores ghz may use (--scaling)")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="memoryd-bench-workers-"))
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(item.split("=", 1) for item in args.env)
    scenarios = tuple(name for name in args.scenarios.split(",") if name)
    if args.scaling:
        counts = tuple(int(n) for n in args.scaling.split(","))
        rows = scaling(workdir, counts, args.duration, args.ghz_cpus, args.messages, args.vectors, scenarios=scenarios, env=env)
    else:
        rows = run(workdir, args.rounds, args.duration, args.messages, args.vectors, scenarios=scenarios, env=env)
    (args.json or workdir / "bench_workers.json").write_text(json.dumps(rows, indent=1))
    print(scaling_table(rows) if args.scaling else table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
