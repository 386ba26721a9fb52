"""Runnable example: save a few messages, read the history, watch for deletions
while deleting one.

    python -m memoryd_client.example --target 127.0.0.1:50051 [--token T] [--ca ca.pem]
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from dataclasses import dataclass
from pathlib import Path

import grpc

from memoryd.v1.event_pb2 import Event, EventType
from memoryd.v1.message_pb2 import Message

from .client import MemoryClient
from .errors import InvalidArgumentError
from .messages import message


@dataclass
class Outcome:
    saved: list[Message]
    history: list[Message]
    deleted_count: int
    deletion: Event
    history_after: list[Message]
    invalid: InvalidArgumentError


async def run(client: MemoryClient, session_id: str) -> Outcome:
    saved = [
        (await client.save_message(session_id, message(role, content))).message
        for role, content in [
            ("user", "What is the capital of France?"),
            ("assistant", "Paris."),
            ("user", "And of Italy?"),
        ]
    ]
    history = await client.get_history(session_id)

    # Watch from now. started() returns once the server has registered the
    # watch, so the deletion below cannot slip in before it.
    async with client.watch([session_id], [EventType.EVENT_TYPE_MESSAGES_DELETED]) as deletions:
        await deletions.started()
        deleted_count = await client.delete_messages(session_id, [saved[1].id])
        deletion = await anext(deletions)

    history_after = await client.get_history(session_id)
    try:
        await client.get_history("")
    except InvalidArgumentError as error:  # carries the google.rpc details
        invalid = error
    else:
        raise RuntimeError("an empty session id was accepted")
    return Outcome(saved, history, deleted_count, deletion, history_after, invalid)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="127.0.0.1:50051")
    parser.add_argument("--token", default=None)
    parser.add_argument("--ca", default=None, help="PEM CA bundle: connect over TLS")
    parser.add_argument("--session", default=f"example-{uuid.uuid4().hex[:8]}")
    args = parser.parse_args()
    credentials = grpc.ssl_channel_credentials(Path(args.ca).read_bytes()) if args.ca else None
    async with MemoryClient(args.target, token=args.token, credentials=credentials) as client:
        outcome = await run(client, args.session)
    print(f"session {args.session}")
    for m in outcome.history:
        print(f"  #{m.seq} {m.role}: {m.content}")
    deleted = outcome.deletion.messages_deleted
    print(f"deleted {outcome.deleted_count}; event seq {outcome.deletion.seq}: ids {list(deleted.ids)}")
    print(f"history now: {[m.content for m in outcome.history_after]}")
    invalid = outcome.invalid
    print(f"invalid request: {invalid.code.name} {invalid.reason} {invalid.field_violations[0].field}")


if __name__ == "__main__":
    asyncio.run(main())
