"""Watch deletions: a subscriber learns exactly which messages went, then resumes without gaps.

    .venv/bin/memoryd serve --data-dir ./data &                   # a running server
    .venv/bin/python examples/watch_deletions.py --target 127.0.0.1:50051
    .venv/bin/python examples/watch_deletions.py                  # or start an embedded one

What a UI or a vector index does with EventService.Watch:
1. watch one session for messages-deleted and history-changed, starting "from now";
2. save three messages and delete two of them (by timestamp, then by id);
3. print each messages-deleted event (its timestamps and ids) and history-changed;
4. remember the last seq, disconnect, delete again, and resume with after_seq = last seq:
   the event written while disconnected arrives, exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import uuid
from pathlib import Path

from memoryd_client import EventType, MemoryClient, message

WATCHED = [EventType.EVENT_TYPE_MESSAGES_DELETED, EventType.EVENT_TYPE_HISTORY_CHANGED]


def describe(event) -> str:
    if event.type == EventType.EVENT_TYPE_MESSAGES_DELETED:
        deleted = event.messages_deleted
        return f"seq {event.seq}: messages deleted, timestamps {list(deleted.timestamps)}, ids {list(deleted.ids)}"
    cause = EventType.Name(event.history_changed.cause)
    return f"seq {event.seq}: history changed ({cause}) - reload session {event.session_id or '(all)'}"


async def next_events(watch, count: int) -> list:
    return [await asyncio.wait_for(anext(watch), 10) for _ in range(count)]


async def run(target: str) -> None:
    session = f"example-{uuid.uuid4().hex[:8]}"
    async with MemoryClient(target) as client:
        saved = await client.save_messages(
            session,
            [message("user", "hi", timestamp=1000), message("assistant", "hello", timestamp=2000),
             message("user", "forget this", timestamp=3000)],
        )  # fmt: skip
        first, second, _ = saved.messages

        async with client.watch([session], WATCHED) as watch:
            await watch.started()  # the watch is registered: nothing written from here on is missed
            print(f"deleted {await client.delete_messages_by_timestamps(session, [3000])} by timestamp")
            print(f"deleted {await client.delete_messages(session, [first.id])} by id")
            for event in await next_events(watch, 4):
                print("  " + describe(event))
            resume_from = watch.last_seq

        # Disconnected: a change happens meanwhile.
        await client.delete_messages(session, [second.id])
        print(f"resuming after seq {resume_from}")
        async with client.watch([session], WATCHED, after_seq=resume_from) as watch:
            for event in await next_events(watch, 2):
                print("  " + describe(event))
        print(f"history now: {[m.content for m in await client.get_history(session)]}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", help="host:port of a running memoryd; default: start an embedded one")
    args = parser.parse_args()
    if args.target:
        await run(args.target)
        return
    from memoryd import logs
    from memoryd.app import start
    from memoryd.config import Config

    logs.configure("warning")  # the embedded server's log lines: only what needs attention

    with tempfile.TemporaryDirectory() as data_dir:
        app = await start(Config(listen="127.0.0.1:0", data_dir=Path(data_dir), log_level="warning"))
        try:
            await run(f"127.0.0.1:{app.port}")
        finally:
            await app.stop(0)


if __name__ == "__main__":
    asyncio.run(main())
