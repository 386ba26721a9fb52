"""Memory formation under load (docs/MEMORY.md), with an instant scripted model
(tests/llm_server.py in a process of its own) or any model (`--llm-url`, `--llm-model`):

    .venv/bin/python tests/load/bench_formation.py --calls 4000 --rounds 4

Each round starts a fresh `memoryd serve` with formation off and one with it on (alternating
which goes first), and sends `--calls` SaveMessage calls from 16 clients over 100 sessions of
10 users (every other message states a fact: "my keyN is vM"): SaveMessage RPS both ways
(on/off: the target is at least 0.90), and CPU per call of the serving process alone and of
the vector engine process (where formation's consumers run on the embedded default: the
default `--vectors engine`, the same both ways; `--vectors off` puts formation in the serving
process, as on MongoDB). CPU per call is the less noisy figure on a shared machine; each
round also reports the 1-minute load average when it started.
With formation on it then waits (WaitForFormation) until formation has processed the last
write: formation throughput (messages/s from the first save until caught up), the server's
own CPU per message over that time (the model's CPU is in another process), and model
calls and tokens per 1,000 messages per strategy (GetFormationStatus). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import grpc
from loadlib import REPO, process_roles, start_memoryd, tree_cpu_seconds

from memoryd.v1 import formation_service_pb2 as fpb
from memoryd.v1 import formation_service_pb2_grpc, memory_service_pb2, memory_service_pb2_grpc, message_pb2
from tests.processes import ServerProcess

CLIENTS = 16
SESSIONS = 100
USERS = 10
STRATEGIES = {1: "summary", 2: "facts", 3: "profile", 4: "custom"}


def model_server(workdir: Path) -> ServerProcess:
    server = ServerProcess([sys.executable, "-m", "tests.llm_server"], workdir, name="llm", cwd=REPO)
    server.start()
    return server


async def _saves(address: str, calls: int) -> tuple[float, int]:
    channels = [grpc.aio.insecure_channel(address) for _ in range(4)]
    numbers = iter(range(calls))
    last = 0

    async def client(n: int) -> None:
        nonlocal last
        stub = memory_service_pb2_grpc.MemoryServiceStub(channels[n % 4])
        for number in numbers:
            session = number % SESSIONS
            text = f"my key{number % 50} is v{number}" if number % 2 else f"just chatting, message {number}"
            answer = await stub.SaveMessage(
                memory_service_pb2.SaveMessageRequest(
                    session_id=f"bench-{session}",
                    message=message_pb2.Message(role="user", content=text),
                    session_attributes=message_pb2.SessionAttributes(user_id=f"user-{session % USERS}"),
                ),
                timeout=60,
            )
            last = max(last, answer.event_seq)

    started = time.monotonic()
    await asyncio.gather(*(client(n) for n in range(CLIENTS)))
    seconds = time.monotonic() - started
    for channel in channels:
        await channel.close()
    return seconds, last


async def _formed(address: str, last: int, timeout_s: float) -> dict:
    async with grpc.aio.insecure_channel(address) as channel:
        formation = formation_service_pb2_grpc.FormationServiceStub(channel)
        await formation.WaitForFormation(
            fpb.WaitForFormationRequest(event_seq=last, timeout_ms=int(timeout_s * 1000)), timeout=timeout_s + 5
        )
        status = await formation.GetFormationStatus(fpb.GetFormationStatusRequest())
    return {
        STRATEGIES[s.strategy]: {
            "calls": s.llm_calls,
            "failures": s.llm_failures,
            "prompt_tokens": s.prompt_tokens,
            "completion_tokens": s.completion_tokens,
        }
        for s in status.strategies
    }


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of these processes (not their children), in seconds."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def split_cpu(pid: int) -> dict[str, float]:
    """CPU seconds so far of the serving process alone, of the engine process, and of the tree."""
    engine = process_roles(pid).get("engine", [])
    return {"serving": cpu_seconds([pid]), "engine": cpu_seconds(engine), "tree": tree_cpu_seconds(pid)}


def per_call(before: dict[str, float], after: dict[str, float], calls: int) -> dict[str, int]:
    return {f"{k}_cpu_us_per_call": round((after[k] - before[k]) * 1e6 / calls) for k in before}


def one(workdir: Path, calls: int, llm: list[str], timeout_s: float, vectors: str) -> dict:
    name = "on" if llm else "off"
    placement = ["--vectors-enabled", "false"] if vectors == "off" else []
    server = start_memoryd(f"memoryd-{name}", workdir, workdir / f"data-{name}", *placement, *llm)
    try:
        result: dict = {"load_1m": round(os.getloadavg()[0], 1)}
        cpu = split_cpu(server.pid)
        started = time.monotonic()
        seconds, last = asyncio.run(_saves(server.target, calls))
        result["rps"] = round(calls / seconds, 1)
        result.update(per_call(cpu, split_cpu(server.pid), calls))
        if llm:
            usage = asyncio.run(_formed(server.target, last, timeout_s))
            formed_seconds = time.monotonic() - started
            result["formed_msgs_per_s"] = round(calls / formed_seconds, 1)
            result["formation_cpu_us_per_msg"] = round((tree_cpu_seconds(server.pid) - cpu["tree"]) * 1e6 / calls)
            result["per_1000_messages"] = {
                k: {m: round(v * 1000 / calls, 1) for m, v in u.items()} for k, u in usage.items()
            }
        return result
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--llm-url", default="", help="a real model instead of the instant scripted one")
    parser.add_argument("--llm-model", default="scripted-1")
    parser.add_argument("--formation-timeout", type=float, default=600.0)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument(
        "--vectors", choices=("engine", "off"), default="engine",
        help="engine: the embedded default (formation runs in the vector engine process); off: no vectors "
        "(formation runs in the serving process)",
    )  # fmt: skip
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-formation-"))
    workdir.mkdir(parents=True, exist_ok=True)
    model = None if args.llm_url else model_server(workdir)
    try:
        url = args.llm_url or f"http://127.0.0.1:{model.port}/v1"
        llm = ["--llm-url", url, "--llm-model", args.llm_model]
        rounds = []
        for r in range(args.rounds):
            order = ("off", "on") if r % 2 == 0 else ("on", "off")  # alternating: neither always goes first
            row: dict = {"round": r, "first": order[0]}
            for which in order:
                row[which] = one(
                    workdir / f"r{r}", args.calls, llm if which == "on" else [], args.formation_timeout, args.vectors
                )
            rounds.append(row)
    finally:
        if model is not None:
            model.stop()
    ratios = [r["on"]["rps"] / r["off"]["rps"] for r in rounds]
    serving = [r["on"]["serving_cpu_us_per_call"] / max(1, r["off"]["serving_cpu_us_per_call"]) for r in rounds]
    print(json.dumps({
        "calls": args.calls, "vectors": args.vectors, "rounds": rounds,
        "rps_on_over_off": [round(x, 3) for x in ratios],
        "rps_on_over_off_median": round(sorted(ratios)[len(ratios) // 2], 3),
        "serving_cpu_on_over_off": [round(x, 3) for x in serving],
        "serving_cpu_on_over_off_median": round(sorted(serving)[len(serving) // 2], 3),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
