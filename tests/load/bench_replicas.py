"""One tenant, many writers, 1 vs N `memoryd serve` replicas on one MongoDB-wire server
(SecantusDB, a private one per run): acknowledged writes per second, writes never
acknowledged within the client's 10 s deadline, failed attempts by status, and the audit of
what the store holds (lost, duplicated, event-seq gaps). The client is
tests/faults/replica_load.py: each writer owns a session, saves one message at a time with
an idempotency key and retries a failed write on the next replica until its deadline.

    .venv/bin/python tests/load/bench_replicas.py [--replicas 1,2] [--writers 12] [--duration 60] [--kill]

`--kill` kills -9 the first replica a third of the way through (N > 1 only). `--server-path DIR`
runs the replicas on another checkout's server/ (PYTHONPATH), for before/after figures.
Prints one JSON object per run on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memoryd.storage.mongo.store import MongoStore  # noqa: E402
from tests.conftest import SecantusServer  # noqa: E402
from tests.faults import replica_load  # noqa: E402
from tests.processes import MemorydServer  # noqa: E402


async def one_run(
    uri: str, workdir: Path, replicas: int, writers: int, duration: float, kill: bool, env: dict | None
) -> dict:
    database = f"bench_{uuid.uuid4().hex[:8]}"
    flags = ("--mongodb-uri", uri, "--mongodb-database", database, "--vectors-enabled", "false")
    servers = [MemorydServer(workdir / f"{database}-{i}", *flags, env=env) for i in range(replicas)]
    killed: list[float] = []

    def during(elapsed: float) -> None:
        if kill and replicas > 1 and not killed and elapsed >= duration / 3:
            servers[0].kill()
            killed.append(elapsed)

    store = MongoStore(uri, database, timeout_ms=30000)
    try:
        for server in servers:
            server.start()
        started = time.monotonic()
        result = await replica_load.run([s.target for s in servers], writers, duration, during=during)
        elapsed = time.monotonic() - started
        await store.open()
        audit = await replica_load.audit(store, result)
    finally:
        await store.close()
        for server in servers:
            server.stop()
    return {
        "replicas": replicas, "writers": writers, "duration_s": round(elapsed, 1),
        "killed_at_s": killed[0] if killed else None,
        "acknowledged": result.writes, "writes_per_s": round(result.writes / elapsed, 1),
        "unacknowledged": len(result.unacknowledged), "failed_attempts": dict(result.failed_attempts),
        "lost": len(audit.lost), "duplicated": len(audit.duplicated), "seq_gaps": audit.seq_gaps,
        "appended_twice": len(audit.appended_twice), "appended_missing": audit.appended_missing,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", default="1,2")
    parser.add_argument("--writers", type=int, default=12)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--kill", action="store_true")
    parser.add_argument("--server-path", help="a checkout's server/ directory to run the replicas from")
    args = parser.parse_args()
    env = None
    if args.server_path:
        env = {**os.environ, "PYTHONPATH": str(Path(args.server_path).resolve())}
    with tempfile.TemporaryDirectory(prefix="bench-replicas-") as tmp:
        workdir = Path(tmp)
        server = SecantusServer(workdir / "secantus")
        server.start()
        try:
            for n in (int(x) for x in args.replicas.split(",")):
                row = asyncio.run(one_run(server.uri, workdir, n, args.writers, args.duration, args.kill, env))
                print(json.dumps(row), flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
