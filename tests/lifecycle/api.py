"""The lifecycle suites' view of a server: stubs of every service, a filler that writes every
kind of record through the API, and a reader that asks every read RPC about what it wrote
(answers as plain dicts, so two deployments' answers compare field for field)."""

from __future__ import annotations

import asyncio
import json
import math
import shlex
import time
from dataclasses import dataclass, field

import grpc
from google.protobuf import json_format

from memoryd.v1 import entry_service_pb2 as epb
from memoryd.v1 import entry_service_pb2_grpc
from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import memory_service_pb2_grpc
from memoryd.v1 import message_pb2
from memoryd.v1 import metadata_service_pb2 as dpb
from memoryd.v1 import metadata_service_pb2_grpc
from memoryd.v1 import summary_service_pb2 as spb
from memoryd.v1 import summary_service_pb2_grpc
from memoryd.v1 import vector_service_pb2 as vpb
from memoryd.v1 import vector_service_pb2_grpc
from tests.processes import memoryd_executable
from tests import processes

MODEL = "test:lifecycle-4d"
WAIT_SECONDS = 30.0


def unit(angle_degrees: float) -> list[float]:
    a = math.radians(angle_degrees)
    return [math.cos(a), math.sin(a), 0.0, 0.0]


@dataclass
class Stubs:
    memory: memory_service_pb2_grpc.MemoryServiceStub
    metadata: metadata_service_pb2_grpc.MetadataServiceStub
    vectors: vector_service_pb2_grpc.VectorServiceStub
    summaries: summary_service_pb2_grpc.SummaryServiceStub
    entries: entry_service_pb2_grpc.EntryServiceStub

    @classmethod
    def on(cls, channel: grpc.aio.Channel) -> Stubs:
        return cls(
            memory_service_pb2_grpc.MemoryServiceStub(channel),
            metadata_service_pb2_grpc.MetadataServiceStub(channel),
            vector_service_pb2_grpc.VectorServiceStub(channel),
            summary_service_pb2_grpc.SummaryServiceStub(channel),
            entry_service_pb2_grpc.EntryServiceStub(channel),
        )


@dataclass
class Written:
    """What a filler wrote, so that a reader knows what to ask about."""

    sessions: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)  # keyword queries, one per user
    angles: list[float] = field(default_factory=list)  # where each user's vectors point

    def __add__(self, other: Written) -> Written:
        return Written(*(a + b for a, b in zip(vars(self).values(), vars(other).values())))


def _message(role: str, content: str, timestamp: int = 0, **fields) -> message_pb2.Message:
    return message_pb2.Message(role=role, content=content, timestamp=timestamp, **fields)


async def fill_user(stubs: Stubs, user: str, word: str, angle: float, sessions: int = 2, big: bool = False) -> Written:
    """Sessions owned by `user` holding every kind of message and record, `word` in their text
    (and in their summaries and entries), caller-supplied vectors pointing at `angle`."""
    written = Written(users=[user], namespaces=["notes", f"users/{user}/prefs"], words=[word], angles=[angle])
    await stubs.metadata.SaveMetadata(
        dpb.SaveMetadataRequest(namespace=f"users/{user}/prefs", key="theme", data={"dark": True, "of": word})
    )
    for n in range(sessions):
        sid = f"{user}-s{n}"
        written.sessions.append(sid)
        segments = [message_pb2.Segment(type="text", data={"text": f"{word} segment"})]
        calls = [message_pb2.ToolCall(id="c1", name="weather", arguments='{"city": "Lyon"}')]
        messages = [
            _message("user", f"We went {word} hiking in the Alps {n}", 1_000 + n, metadata={"platform": "web"}),
            _message("assistant", f"The {word} lake was cold", 2_000 + n, reasoning_content="remembering", tool_calls=calls),
            _message("tool", '{"temp": 3}', 2_500 + n, tool_call_id="c1", kind=""),
            _message("user", f"我们去山里{word}徒步旅行了", 3_000 + n, segments=segments, kind="chat"),
            _message("system", "a control message", 0, kind="summary"),
            _message("user", f"{word} to be deleted", 4_000 + n),
            _message("user", f"{word} the newest words", 0),
        ]
        if big and n == 0:
            messages.append(_message("assistant", ("长" * 349_000) + f" {word} end", 5_000))  # 1 MiB of UTF-8
        attributes = message_pb2.SessionAttributes(user_id=user, agent_id="agent", labels={"plan": "pro", "n": str(n)})
        saved = await stubs.memory.SaveMessages(
            mpb.SaveMessagesRequest(session_id=sid, messages=messages, idempotency_key="first", session_attributes=attributes)
        )
        stored = {m.content: m for m in saved.messages}
        await stubs.memory.DeleteMessages(mpb.DeleteMessagesRequest(session_id=sid, ids=[stored[f"{word} to be deleted"].id]))
        await stubs.memory.UpdateMessageContent(
            mpb.UpdateMessageContentRequest(session_id=sid, old_text="cold", new_text="freezing")
        )
        await stubs.memory.TrimHistory(mpb.TrimHistoryRequest(session_id=sid, keep_recent=len(messages) - 2))
        await stubs.metadata.SaveMetadata(dpb.SaveMetadataRequest(namespace="notes", key=sid, data={"about": f"{word} notes"}))
        await stubs.summaries.SaveSummary(
            spb.SaveSummaryRequest(session_id=sid, from_seq=1, to_seq=2, text=f"{word} recap", metadata={"by": "test"})
        )
        points = [
            vpb.VectorPoint(
                model_id=MODEL, vector=unit(angle + i), session_id=sid, message_id=m.id, timestamp=m.timestamp,
                role=m.role, text=m.content[:200],
            )
            for i, m in enumerate(saved.messages[:2])
        ]  # fmt: skip
        await stubs.vectors.UpsertVectors(vpb.UpsertVectorsRequest(points=points))
    for text, tags in ((f"{user} likes {word} tea", ["drinks"]), (f"{user} lives by the {word} lake", [])):
        await stubs.entries.SaveEntry(
            epb.SaveEntryRequest(scope=user, text=text, tags=tags, embedding=unit(angle), model_id=MODEL)
        )
    return written


def _plain(message):
    if isinstance(message, str):
        return message
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


async def _pages(call, request, items: str) -> list[dict]:
    """Every page of a paged read, the items of each (page tokens differ between
    deployments, so they are followed, not compared)."""
    found: list[dict] = []
    while True:
        response = await call(request)
        found += [_plain(item) for item in getattr(response, items)]
        if not response.next_page_token:
            return found
        request.page_token = response.next_page_token


async def read_everything(
    stubs: Stubs, written: Written, *, search: bool = True, keyword_index: bool = True
) -> dict[str, object]:
    """Every read RPC's answer about what `written` names (searches first: the first semantic
    search records the tenant's legacy-model marker, a metadata record). Without
    `keyword_index`, no SearchMemory by text (nothing built the keyword points)."""
    answers: dict[str, object] = await search_everything(stubs, written, keyword_index) if search else {}
    memory, summaries = stubs.memory, stubs.summaries
    for sid in written.sessions:
        answers[f"GetHistory {sid}"] = _plain(await memory.GetHistory(mpb.GetHistoryRequest(session_id=sid, limit=100)))
        answers[f"GetFullHistory {sid}"] = await _pages(
            memory.GetFullHistory, mpb.GetFullHistoryRequest(session_id=sid, page_size=3), "messages"
        )
        answers[f"ListMessagesInRange {sid}"] = await _pages(
            memory.ListMessagesInRange,
            mpb.ListMessagesInRangeRequest(session_id=sid, from_ts=0, to_ts=2**62, roles=["user"], page_size=2),
            "messages",
        )
        answers[f"GetSession {sid}"] = _plain(await memory.GetSession(mpb.GetSessionRequest(session_id=sid)))
        answers[f"ListSummaries {sid}"] = await _pages(
            summaries.ListSummaries, spb.ListSummariesRequest(session_id=sid, page_size=1), "summaries"
        )
        answers[f"GetSummaryCursor {sid}"] = _plain(
            await summaries.GetSummaryCursor(spb.GetSummaryCursorRequest(session_id=sid))
        )
        answers[f"AssembleContext {sid}"] = _plain(
            await summaries.AssembleContext(spb.AssembleContextRequest(session_id=sid, budget_chars=4000, recent_raw_n=3))
        )
        answers[f"GetMetadata notes {sid}"] = _plain(
            await stubs.metadata.GetMetadata(dpb.GetMetadataRequest(namespace="notes", key=sid))
        )
    answers["GetRecentAcrossSessions"] = _plain(
        await memory.GetRecentAcrossSessions(mpb.GetRecentAcrossSessionsRequest(limit=1000, roles=["user", "assistant", "tool"]))
    )
    answers["ListSessions"] = await _pages(memory.ListSessions, mpb.ListSessionsRequest(page_size=2), "sessions")
    for user in written.users:
        answers[f"ListSessions {user}"] = await _pages(
            memory.ListSessions, mpb.ListSessionsRequest(user_id=user, page_size=1), "sessions"
        )
        answers[f"ListEntries {user}"] = await _pages(
            stubs.entries.ListEntries, epb.ListEntriesRequest(scope=user, page_size=1), "entries"
        )
    for namespace in written.namespaces:
        answers[f"ListMetadata {namespace}"] = await _pages(
            stubs.metadata.ListMetadata, dpb.ListMetadataRequest(namespace=namespace, page_size=1), "entries"
        )
    answers["ListMetadata memoryd."] = await _pages(
        stubs.metadata.ListMetadata, dpb.ListMetadataRequest(namespace_prefix="memoryd.", page_size=2), "entries"
    )
    answers["ListNamespaces"] = await _pages(stubs.metadata.ListNamespaces, dpb.ListNamespacesRequest(page_size=2), "namespaces")
    return answers


async def search_everything(stubs: Stubs, written: Written, keyword_index: bool = True) -> dict[str, object]:
    """SearchMemory (keyword and semantic) and SearchEntries (keyword and semantic) for each
    user's word and angle, in every user's scope."""
    answers: dict[str, object] = {}
    for word, angle in zip(written.words, written.angles):
        if keyword_index:
            keyword = await stubs.vectors.SearchMemory(
                vpb.SearchMemoryRequest(
                    query_text=word, top_k=50, context_window=1, reference_time=10_000, keep_repeated_texts=True
                )
            )
            answers[f"SearchMemory text {word}"] = _plain(keyword)
        semantic = await stubs.vectors.SearchMemory(
            vpb.SearchMemoryRequest(
                query_vector=unit(angle), model_id=MODEL, top_k=50, reference_time=10_000, keep_repeated_texts=True
            )
        )
        answers[f"SearchMemory vector {angle}"] = _plain(semantic)
        for user in written.users:
            answers[f"SearchEntries {user} text {word}"] = _plain(
                await stubs.entries.SearchEntries(epb.SearchEntriesRequest(scope=user, query=word, keyword_weight=1))
            )
            answers[f"SearchEntries {user} vector {angle}"] = _plain(
                await stubs.entries.SearchEntries(
                    epb.SearchEntriesRequest(scope=user, query_embedding=unit(angle), model_id=MODEL, keyword_weight=0)
                )
            )
    return answers


def hit_keys(answer: dict) -> list[tuple[str, str]]:
    """A SearchMemory or SearchEntries answer as what it found (session and message, or
    scope and entry), sorted: scores depend on everything else in the index."""
    if "hits" not in answer:
        return []
    return sorted(
        (hit.get("session_id", hit.get("entry", {}).get("scope", "")), hit.get("message_id", hit.get("entry", {}).get("id", "")))
        for hit in answer["hits"]
    )


async def indexed(stubs: Stubs, keyword_points: int) -> None:
    """Wait until the tenant holds `keyword_points` keyword points (messages are indexed in
    the background)."""
    until = time.monotonic() + WAIT_SECONDS
    while True:
        stats = await stubs.vectors.GetVectorStats(vpb.GetVectorStatsRequest())
        if stats.keyword_points == keyword_points:
            return
        assert time.monotonic() < until, f"{stats.keyword_points} keyword points, not {keyword_points}"
        await asyncio.sleep(0.05)


# The messages fill_user writes per session that keyword search indexes (user and assistant
# text that is not a control kind and was not deleted), and the 1 MiB one of `big`.
INDEXED_PER_SESSION = 4


# -- the commands -----------------------------------------------------------------
async def memoryd(*args: str, shell: str = "") -> list[dict]:
    """Run `memoryd ARGS` (or a shell pipeline of memoryd commands); its stderr as JSON lines."""
    if shell:
        process = await processes.shell_async(
            shell, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
    else:
        process = await processes.exec_async(
            memoryd_executable(), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
    out, err = await process.communicate()
    logs = [json.loads(line) for line in err.decode().splitlines() if line.strip()]
    assert process.returncode == 0, logs
    return logs


def command(*args: str) -> str:
    return shlex.join([memoryd_executable(), *args])


def event(logs: list[dict], name: str) -> dict:
    return next(line for line in logs if line["event"] == name)
