"""What custom formation strategies cost (docs/MEMORY.md "Custom strategies"), with the
instant scripted model (tests/formation/script.py over tests/llm_server.py's real HTTP
server) and formation's consumers in this process on a SQLite store:

    .venv/bin/python tests/load/bench_custom.py --messages 2000 --strategies 0 1 2

For each count of custom strategies (each the tests' "likes" schema), a fresh store gets
`--messages` user messages over 20 sessions of 5 users (every other one "i like wN", the rest
"my keyN is vN": facts), then formation catches up (the runtime's sync of the tenant, every
consumer through the newest event). Prints one JSON line per count: catch-up seconds and
messages/s (wall clock; the model's CPU is in this process too), this process's CPU per
message, and model calls and prompt/completion tokens per 1,000 messages per strategy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memoryd.domain.limits import Limits  # noqa: E402
from memoryd.domain.memory import Memory  # noqa: E402
from memoryd.domain.models import Message  # noqa: E402
from memoryd.domain.sessions import SessionAttributes  # noqa: E402
from memoryd.domain.summaries import Summaries  # noqa: E402
from memoryd.formation.settings import Settings  # noqa: E402
from memoryd.storage.sqlite.store import SqliteStore  # noqa: E402
from tests.formation.conftest import make_formation  # noqa: E402
from tests.formation.script import Model  # noqa: E402
from tests.llm_server import ScriptedLLM  # noqa: E402

SESSIONS = 20
USERS = 5
TENANT = "bench"
SCHEMA = (
    '{"type": "object", "additionalProperties": false, "required": ["item"],'
    ' "properties": {"item": {"type": "string"}}}'
)


def strategy(n: int) -> dict:
    return {"name": f"likes{n}", "prompt": "Record each thing the user likes.", "json_schema": SCHEMA, "enabled": True}


async def run(messages: int, strategies: int) -> dict:
    with tempfile.TemporaryDirectory() as folder, ScriptedLLM(Model()) as llm:
        store = SqliteStore(Path(folder) / "memoryd.db")
        await store.open()
        limits = Limits()
        formation = make_formation(store, Summaries(store, limits), llm, Settings(), timeout_seconds=30.0)
        try:
            memory = Memory(store, limits)
            if strategies:
                custom = [strategy(i) for i in range(strategies)]
                await formation.settings.save(TENANT, "", {"custom_strategies": custom})
            for s in range(SESSIONS):
                await memory.update_session(TENANT, f"s{s}", SessionAttributes(f"u{s % USERS}", "", {}), [])
            per = messages // SESSIONS
            for s in range(SESSIONS):
                texts = [f"i like w{s}x{i}" if i % 2 else f"my key{s}x{i} is v{i}" for i in range(per)]
                batch = [Message(role="user", content=t) for t in texts]
                for start in range(0, per, 10):  # saves of 10 messages, as a chat client's turns
                    await memory.save_messages(TENANT, f"s{s}", batch[start : start + 10], "")
            runtime = formation.runtime
            assert runtime is not None
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(10):
                await runtime.sync_tenant(TENANT)
                latest = (await store.event_bounds(TENANT))[1]
                if all(track.position(TENANT) >= latest for track in formation.tracks.values()):
                    break
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            done = per * SESSIONS
            usage = {}
            for name in formation.tracks:
                u = formation.meter.usage(TENANT, name) if formation.meter else None
                if u is not None and u.calls:
                    usage[name] = {
                        "calls_per_1000": round(u.calls * 1000 / done, 1),
                        "prompt_tokens_per_1000": round(u.prompt_tokens * 1000 / done),
                        "completion_tokens_per_1000": round(u.completion_tokens * 1000 / done),
                    }
            records = 0
            for user in range(USERS):
                records += len(await formation.custom.records.all(TENANT, f"u{user}"))
            return {
                "custom_strategies": strategies,
                "messages": done,
                "catch_up_seconds": round(wall, 2),
                "messages_per_second": round(done / wall, 1),
                "cpu_ms_per_message": round(cpu * 1000 / done, 2),
                "custom_records": records,
                "usage": usage,
            }
        finally:
            await formation.close()
            await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--strategies", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    for count in args.strategies:
        print(json.dumps(asyncio.run(run(args.messages, count))), flush=True)


if __name__ == "__main__":
    main()
