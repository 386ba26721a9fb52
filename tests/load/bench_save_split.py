"""Where a SaveMessage's CPU goes in the serving process, without gRPC: the servicer called
in-process as the gRPC server calls it (request bytes in, rpc.add_service's options), `--concurrency`
callers at once, the load suite's `save_message` message (platform and sender metadata, over
1,000 sessions), on the embedded default (the engine process indexes beside it and is not
counted). Prints one JSON line: the process's CPU per call, the event loop thread's share (the
rest is the SQLite writer thread's: its checkpoints; small appends commit on the loop,
storage/sqlite/commits.py), the commit groups' sizes and, with `--sql`, the CPU per write by
SQL statement (clocked around each `execute`, which adds a little).

    .venv/bin/python tests/load/bench_save_split.py --calls 5000 --sql

Served over gRPC the same call costs more (docs/PERFORMANCE.md, run AB): compare with the
load suite's CPU per call and the do-nothing servicer's.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sqlite3
import tempfile
import time
import types
from typing import Any

from memoryd.storage.sqlite import commits
from memoryd.storage.sqlite import store as sqlite_store
from memoryd.v1 import memory_service_pb2, message_pb2
from memoryd.wire import dict_to_struct

CONTENT = (
    "Load-test message {n}: the quick brown fox jumps over the lazy dog while the agent remembers"
    " what the user said about their travel plans."
)


class _Context:
    """What the servicer asks of a grpc.aio context (no token: the embedded default's open access)."""

    def invocation_metadata(self) -> tuple:
        return ()

    def time_remaining(self) -> None:
        return None


class _SqlClock:
    """Thread CPU per SQL statement (its first 60 characters), through a connection factory."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = collections.defaultdict(float)
        seconds = self.seconds

        def clocked(call: Any) -> Any:
            def run(connection: sqlite3.Connection, sql: str, *args: Any) -> sqlite3.Cursor:
                started = time.thread_time()
                try:
                    return call(connection, sql, *args)
                finally:
                    seconds[sql[:60]] += time.thread_time() - started

            return run

        self.factory = type(
            "Clocked", (sqlite3.Connection,),
            {"execute": clocked(sqlite3.Connection.execute), "executemany": clocked(sqlite3.Connection.executemany)},
        )  # fmt: skip

    def install(self) -> None:
        """The store's module sees sqlite3 with this factory's `connect`."""
        connect = sqlite3.connect
        clocked = {**vars(sqlite3), "connect": lambda *a, **k: connect(*a, factory=self.factory, **k)}
        sqlite_store.sqlite3 = types.SimpleNamespace(**clocked)


def _request(n: int) -> bytes:
    message = message_pb2.Message(role="user", content=CONTENT.format(n=n))
    dict_to_struct({"platform": "load", "sender": {"id": f"user-{n % 97}"}}, message.metadata)
    return memory_service_pb2.SaveMessageRequest(session_id=f"load-save-{n % 1000}", message=message).SerializeToString()


async def _run(calls: int, concurrency: int, sql: _SqlClock | None, data_dir: str) -> dict:
    from memoryd import app, config, logs

    logs.configure("warning")
    parts = await app.build(config.load(None, {**os.environ, "MEMORYD_DATA_DIR": data_dir}))
    servicer = next(s for s in parts.servicers.values() if hasattr(s, "SaveMessage"))
    method = memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"].methods_by_name["SaveMessage"]
    options = {"request_type": memory_service_pb2.SaveMessageRequest, "rpc": method.full_name}
    groups: collections.Counter = collections.Counter()
    commit_group = commits.GroupCommit._commit

    def counted(group: Any, conn: Any, batch: list, **kwargs: Any) -> list:
        groups[len(batch)] += 1
        return commit_group(group, conn, batch, **kwargs)

    commits.GroupCommit._commit = counted
    context = _Context()
    try:

        async def save(requests: list[bytes]) -> None:
            pending = iter(requests)

            async def caller() -> None:
                for request in pending:
                    response = await servicer.SaveMessage(request, context, **options)
                    response.SerializeToString()

            await asyncio.gather(*(caller() for _ in range(concurrency)))

        await save([_request(n) for n in range(min(calls, 500))])  # warm: connections, sessions
        groups.clear()
        if sql is not None:
            sql.seconds.clear()
        requests = [_request(n) for n in range(calls)]
        cpu, loop_cpu, started = time.process_time(), time.thread_time(), time.monotonic()
        await save(requests)
        cpu, loop_cpu, seconds = time.process_time() - cpu, time.thread_time() - loop_cpu, time.monotonic() - started
    finally:
        commits.GroupCommit._commit = commit_group
        await parts.vectors.close()
        await parts.store.close()
    result = {
        "calls": calls, "concurrency": concurrency, "calls_per_s": round(calls / seconds),
        "cpu_us_per_call": round(cpu * 1e6 / calls), "loop_cpu_us_per_call": round(loop_cpu * 1e6 / calls),
        "commit_groups": dict(sorted(groups.items())),
    }  # fmt: skip
    if sql is not None:
        ranked = sorted(sql.seconds.items(), key=lambda item: -item[1])
        result["sql_us_per_write"] = {statement: round(s * 1e6 / calls, 1) for statement, s in ranked if s * 1e6 / calls >= 0.5}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5_000)
    parser.add_argument("--concurrency", type=int, default=16, help="callers at once (the scenario's)")
    parser.add_argument("--sql", action="store_true", help="also clock each SQL statement of the writes")
    args = parser.parse_args()
    sql = _SqlClock() if args.sql else None
    if sql is not None:
        sql.install()
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-save-") as tmp:
        print(json.dumps(asyncio.run(_run(args.calls, args.concurrency, sql, tmp))))


if __name__ == "__main__":
    main()
