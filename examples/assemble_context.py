"""AssembleContext feeding an LLM prompt: summaries with a cursor, a character budget,
long-term memory entries.

    .venv/bin/python examples/assemble_context.py                    # starts an embedded server
    .venv/bin/python examples/assemble_context.py --target 127.0.0.1:50051

Without memory formation (docs/MEMORY.md) memoryd calls no LLM: the agent writes the summary
with its own model and saves it as a slice. Here a fixed string stands in for that model call. The script prints the
chat-completions `messages` array it would send, and what the budget cut.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import uuid
from pathlib import Path

import grpc

from memoryd.v1 import entry_service_pb2 as epb
from memoryd.v1 import entry_service_pb2_grpc
from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from memoryd.v1 import summary_service_pb2 as spb
from memoryd.v1 import summary_service_pb2_grpc

SYSTEM_PROMPT = "You are a helpful assistant."


def msg(role: str, content: str = "", *, calls=(), call_id: str = "") -> message_pb2.Message:
    message = message_pb2.Message(role=role, content=content, tool_call_id=call_id)
    for cid, name, arguments in calls:
        message.tool_calls.add(id=cid, name=name, arguments=arguments)
    return message


def to_chat(message: message_pb2.Message) -> dict:
    """One stored message as an OpenAI-style chat message."""
    out: dict = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    return out


async def run(target: str) -> None:
    channel = grpc.aio.insecure_channel(target)
    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
    summaries = summary_service_pb2_grpc.SummaryServiceStub(channel)
    entries = entry_service_pb2_grpc.EntryServiceStub(channel)
    session = f"demo-{uuid.uuid4().hex[:8]}"
    scope = f"f:{uuid.uuid4().hex[:8]}"

    # 1. A conversation, including a tool call and its result.
    conversation = [
        msg("user", "Hi! I'm planning a trip to Oslo next week."),
        msg("assistant", "Nice! What would you like to know?"),
        msg("user", "What's the weather going to be like?"),
        msg("assistant", calls=[("call-1", "get_weather", '{"city": "Oslo"}')]),
        msg("tool", '{"forecast": "rain, 8°C"}', call_id="call-1"),
        msg("assistant", "Expect rain and about 8°C — pack a raincoat."),
        msg("user", "Thanks. Any museum you'd recommend? 🏛️"),
    ]
    saved = await memory.SaveMessages(mpb.SaveMessagesRequest(session_id=session, messages=conversation))
    print(f"saved {len(saved.messages)} messages, seqs {saved.messages[0].seq}..{saved.messages[-1].seq}")

    # 2. The agent summarizes what it has not summarized yet: the cursor says where to start.
    cursor = await summaries.GetSummaryCursor(spb.GetSummaryCursorRequest(session_id=session))
    upto = saved.messages[5].seq  # summarize through the assistant's weather answer
    summary_text = "The user plans a trip to Oslo next week; the forecast is rain and 8°C (raincoat advised)."
    await summaries.SaveSummary(
        spb.SaveSummaryRequest(session_id=session, from_seq=cursor.cursor + 1, to_seq=upto, text=summary_text)
    )
    # Restarted agents never re-summarize: the cursor is stored with the slice.
    print("summary cursor:", (await summaries.GetSummaryCursor(spb.GetSummaryCursorRequest(session_id=session))).cursor)

    # 3. Long-term memory: facts that outlive the session.
    await entries.SaveEntry(epb.SaveEntryRequest(scope=scope, text="Prefers art museums over history museums", tags=["museum", "preference"]))
    await entries.SaveEntry(epb.SaveEntryRequest(scope=scope, text="Vegetarian", tags=["food"]))
    facts = await entries.SearchEntries(epb.SearchEntriesRequest(scope=scope, query="museum", limit=3))

    # 4. Assemble the context under a budget and build the prompt.
    context = await summaries.AssembleContext(
        spb.AssembleContextRequest(session_id=session, budget_chars=160, recent_raw_n=4)
    )
    system = SYSTEM_PROMPT
    if facts.hits:
        system += "\nWhat you remember about the user:\n" + "\n".join(f"- {h.entry.text}" for h in facts.hits)
    prompt = [{"role": "system", "content": system}]
    if context.HasField("summary"):
        # As a user message, not a second system message (seed 001).
        prompt.append({"role": "user", "content": f"Summary of the earlier conversation: {context.summary.text}"})
    prompt += [to_chat(m.message) for m in context.messages]

    print(json.dumps(prompt, ensure_ascii=False, indent=2))
    print(f"used {context.used_chars} of 160 characters; cursor {context.cursor}")
    for cut in context.cuts:
        print(
            f"cut: {spb.ContextPart.Name(cut.part)} {cut.id or '-'}: {spb.CutReason.Name(cut.reason)},"
            f" {cut.cut_chars} chars{' (shortened)' if cut.truncated else ''}"
        )
    await channel.close()


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

    logs.configure("warning")
    with tempfile.TemporaryDirectory() as data_dir:
        app = await start(Config(listen="127.0.0.1:0", data_dir=Path(data_dir), log_level="warning"))
        try:
            await run(f"127.0.0.1:{app.port}")
        finally:
            await app.stop(0)


if __name__ == "__main__":
    asyncio.run(main())
