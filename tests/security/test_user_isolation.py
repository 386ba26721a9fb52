"""Tokens bound to one end user: the tenant-isolation matrix one level down. In one tenant,
alice's token calls every RPC against bob's session, messages, timestamps, vectors, summary,
entry scope and metadata namespace, and against the tenant's own (ownerless) session,
records and entries; every call is refused (PERMISSION_DENIED, USER_ACCESS_DENIED) or
answers with nothing of theirs, and their stored state is unchanged. Reads across sessions
(GetRecentAcrossSessions, ListSessions, SearchMemory in every scope, AssembleContext's
recall, Watch with and without a session filter) return alice's own data and only it.

The cases are keyed by the served RPCs' full names and the test fails until every served
RPC has one (an RPC added later is attacked too once classified). Over gRPC on every
backend, over HTTP/JSON, and through the MCP server's tools; it prints the counts.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format, message_factory, struct_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2

from memoryd.app import SERVICES, start
from memoryd.config import Config
from memoryd.v1 import entry_service_pb2 as ent
from memoryd.v1 import event_pb2, message_pb2
from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import formation_service_pb2 as form
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import metadata_service_pb2 as meta
from memoryd.v1 import summary_service_pb2 as summ
from memoryd.v1 import vector_service_pb2 as vec
from tests.conftest import BACKENDS, mongo_uri_for
from tests.formation.script import Model
from tests.http.calls import POOL, path
from tests.http.test_watch import envelope, frames
from tests.llm_server import ScriptedLLM
from tests.security.harness import new_token, rich_status

ALL_SCOPES = "memory:read memory:write memory:admin"
# A custom formation strategy (the scripted model: "i like <thing>" gives {"item": "<thing>"}).
LIKES = form.CustomStrategy(name="likes", prompt="What the user likes.", enabled=True, json_schema=(
    '{"type": "object", "additionalProperties": false, "required": ["item"], "properties": {"item": {"type": "string"}}}'))  # confinement, not scopes, is what refuses here
MODEL = "test:model"
ROLES = ["user", "assistant", "system", "tool"]
FAR_FUTURE = 1 << 62
SERVED = {method.full_name for service in SERVICES for method in service.descriptor.methods}


@dataclass
class Refusal:
    code: str
    reason: str | None
    field: str | None


@dataclass
class Tokens:
    tenant: str = field(default_factory=new_token)
    alice: str = field(default_factory=new_token)
    bob: str = field(default_factory=new_token)

    def text(self) -> str:
        return f"acme: {self.tenant}\nacme: {self.alice} {ALL_SCOPES} user=alice\nacme: {self.bob} {ALL_SCOPES} user=bob\n"


# -- transports: call any RPC by its full name ------------------------------------------


class GrpcTransport:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel

    async def call(self, token: str, name: str, request: Message) -> Message | Refusal:
        method = POOL.FindMethodByName(name)
        stub = self.channel.unary_unary(
            path(method),
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=message_factory.GetMessageClass(method.output_type).FromString,
        )
        try:
            return await stub(request, metadata=(("authorization", f"Bearer {token}"),), timeout=30)
        except grpc.aio.AioRpcError as error:
            info = error_details_pb2.ErrorInfo()
            for detail in rich_status(error).details if rich_status(error) else ():
                if detail.Is(info.DESCRIPTOR):
                    detail.Unpack(info)
            return Refusal(error.code().name.lower(), info.reason or None, info.metadata.get("field"))

    async def watch(self, token: str, request: ev.WatchRequest, marker: str) -> list[event_pb2.Event]:
        """Events of a Watch until the compress-requested event whose reason is `marker` (included)."""
        stream = self.channel.unary_stream(
            "/memoryd.v1.EventService/Watch",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=ev.WatchResponse.FromString,
        )(request, metadata=(("authorization", f"Bearer {token}"),), timeout=60)
        events = []
        while True:
            response = await stream.read()
            assert response is not grpc.aio.EOF
            if response.HasField("event"):
                events.append(response.event)
                if _is_marker(response.event, marker):
                    stream.cancel()
                    return events


class HttpTransport:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def call(self, token: str, name: str, request: Message) -> Message | Refusal:
        method = POOL.FindMethodByName(name)
        response = await self.http.post(
            path(method), json=json_format.MessageToDict(request), headers={"authorization": f"Bearer {token}"}
        )
        body = response.json()
        if response.status_code != 200:
            infos = [d["debug"] for d in body.get("details", []) if d["type"] == "google.rpc.ErrorInfo"]
            info = infos[0] if infos else {}
            return Refusal(body["code"], info.get("reason"), info.get("metadata", {}).get("field"))
        return json_format.ParseDict(body, message_factory.GetMessageClass(method.output_type)())

    async def watch(self, token: str, request: ev.WatchRequest, marker: str) -> list[event_pb2.Event]:
        headers = {"content-type": "application/connect+json", "authorization": f"Bearer {token}"}
        events = []
        content = envelope(json_format.MessageToDict(request))
        async with self.http.stream("POST", "/memoryd.v1.EventService/Watch", content=content, headers=headers) as response:
            async for flags, frame in frames(response):
                assert flags == 0, frame
                if "event" in frame:
                    events.append(json_format.ParseDict(frame["event"], event_pb2.Event()))
                    if _is_marker(events[-1], marker):
                        return events
        raise AssertionError("the stream ended before the marker")


def _alices(session_id: str) -> bool:
    """Alice's sessions, of this world or an earlier one in the same server (named so)."""
    return session_id.startswith(("alice-", "fresh-"))


def _is_marker(event: event_pb2.Event, marker: str) -> bool:
    return event.HasField("compress_requested") and event.compress_requested.reason == marker


async def publish_marker(transport: Any, token: str, session: str) -> str:
    marker = uuid.uuid4().hex
    request = ev.PublishEventRequest(session_id=session, compress_requested=event_pb2.CompressRequested(reason=marker))
    published = await transport.call(token, "memoryd.v1.EventService.PublishEvent", request)
    assert not isinstance(published, Refusal), published
    return marker


# -- the world: bob's data, the tenant's, alice's own --------------------------------------


def _struct(**fields: Any) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(fields)
    return s


@dataclass
class World:
    tag: str
    bob_session: str
    tenant_session: str
    alice_session: str
    bob_ids: list[str]
    bob_timestamps: list[int]
    tenant_ids: list[str]
    alice_ids: list[str]
    bob_entry_id: str
    bob_fact_id: str  # formed from bob's "my secret is ..." (tests/formation/script.py)
    bob_record_id: str  # a custom strategy's record, formed from bob's "i like ..."
    secrets: list[str]  # text only bob and the tenant wrote

    @property
    def victim_sessions(self) -> tuple[str, str]:
        return (self.bob_session, self.tenant_session)

    def markers(self) -> list[bytes]:
        """Whatever of bob's and the tenant's must never reach alice."""
        values = [*self.secrets, *self.bob_ids, *self.tenant_ids, self.bob_session, self.tenant_session, "users/bob/"]
        return [v.encode() for v in values]


async def build_world(t: GrpcTransport, tokens: Tokens) -> World:
    tag = uuid.uuid4().hex[:8]
    bob_secret, tenant_secret = f"bobsecret{tag}", f"tenantsecret{tag}"
    bob_s, tenant_s, alice_s = f"bob-{tag}", f"tenant-{tag}", f"alice-{tag}"

    async def ok(token: str, name: str, request: Message) -> Any:
        result = await t.call(token, name, request)
        assert not isinstance(result, Refusal), (name, result)
        return result

    def messages(secret: str) -> list[message_pb2.Message]:
        return [
            message_pb2.Message(role=role, content=f"{secret} words {i}", timestamp=10_000 + i, metadata=_struct(platform="qq"))
            for i, role in enumerate(ROLES)
        ]

    bob = await ok(tokens.bob, "memoryd.v1.MemoryService.SaveMessages", mem.SaveMessagesRequest(session_id=bob_s, messages=messages(bob_secret)))
    tenant = await ok(
        tokens.tenant, "memoryd.v1.MemoryService.SaveMessages", mem.SaveMessagesRequest(session_id=tenant_s, messages=messages(tenant_secret))
    )
    alice = await ok(
        tokens.alice,
        "memoryd.v1.MemoryService.SaveMessage",
        mem.SaveMessageRequest(session_id=alice_s, message=message_pb2.Message(role="user", content=f"alice own words {tag}", timestamp=20_000)),
    )
    for token, saved, session, vector in (
        (tokens.bob, bob.messages, bob_s, [1.0, 0.5, 0.25]),
        (tokens.tenant, tenant.messages, tenant_s, [1.0, 0.5, 0.3]),
        (tokens.alice, [alice.message], alice_s, [0.0, 1.0, 0.0]),
    ):
        points = [
            vec.VectorPoint(model_id=MODEL, vector=vector, session_id=session, message_id=m.id, timestamp=m.timestamp,
                            role=m.role, text=m.content, platform="qq", sender_id=f"speaker-{session}")
            for m in saved
        ]
        await ok(token, "memoryd.v1.VectorService.UpsertVectors", vec.UpsertVectorsRequest(points=points))
    for token, session, text, vector in (
        (tokens.bob, bob_s, bob_secret, [1.0, 0.5, 0.25]),
        (tokens.tenant, tenant_s, tenant_secret, [1.0, 0.5, 0.3]),
        (tokens.alice, alice_s, f"alice own summary {tag}", [0.0, 1.0, 0.0]),
    ):  # slices, searchable by text and by vector (SearchSummaries, SearchMemory's slices)
        await ok(token, "memoryd.v1.SummaryService.SaveSummary",
                 summ.SaveSummaryRequest(session_id=session, from_seq=1, to_seq=1, text=text, vector=vector, model_id=MODEL))
    entry = await ok(tokens.bob, "memoryd.v1.EntryService.SaveEntry", ent.SaveEntryRequest(scope="bob", text=bob_secret))
    await ok(tokens.tenant, "memoryd.v1.EntryService.SaveEntry", ent.SaveEntryRequest(scope="shared", text=tenant_secret))
    await ok(tokens.alice, "memoryd.v1.EntryService.SaveEntry", ent.SaveEntryRequest(scope="alice", text=f"alice fact {tag}"))
    await ok(tokens.bob, "memoryd.v1.MetadataService.SaveMetadata",
             meta.SaveMetadataRequest(namespace="users/bob/notes", key="k", data=_struct(secret=bob_secret)))
    await ok(tokens.tenant, "memoryd.v1.MetadataService.SaveMetadata",
             meta.SaveMetadataRequest(namespace=f"config-{tag}", key="k", data=_struct(secret=tenant_secret)))
    await ok(tokens.alice, "memoryd.v1.MetadataService.SaveMetadata",
             meta.SaveMetadataRequest(namespace="users/alice/notes", key="k", data=_struct(mine=tag)))
    await ok(tokens.bob, "memoryd.v1.EventService.PublishEvent",
             ev.PublishEventRequest(session_id=bob_s, compress_requested=event_pb2.CompressRequested()))
    # Formed memory (the scripted model): a fact, a custom record and a profile of bob's, and of alice's.
    await ok(tokens.tenant, "memoryd.v1.FormationService.SetFormationSettings", form.SetFormationSettingsRequest(
        settings=form.FormationSettings(custom_strategies=form.CustomStrategies(strategies=[LIKES]))))
    await ok(tokens.bob, "memoryd.v1.MemoryService.SaveMessage",
             mem.SaveMessageRequest(session_id=bob_s, message=message_pb2.Message(role="user", content=f"i like {bob_secret}")))
    told = await ok(tokens.bob, "memoryd.v1.MemoryService.SaveMessage",
                    mem.SaveMessageRequest(session_id=bob_s, message=message_pb2.Message(role="user", content=f"my secret is {bob_secret}")))
    await ok(tokens.alice, "memoryd.v1.MemoryService.SaveMessage",
             mem.SaveMessageRequest(session_id=alice_s, message=message_pb2.Message(role="user", content=f"my color is blue{tag}")))
    bob_ids = [m.id for m in bob.messages] + [told.message.id]
    seq = (await ok(tokens.tenant, "memoryd.v1.EventService.PublishEvent",
                    ev.PublishEventRequest(session_id=tenant_s, compress_requested=event_pb2.CompressRequested()))).event.seq
    await ok(tokens.tenant, "memoryd.v1.FormationService.WaitForFormation", form.WaitForFormationRequest(event_seq=seq, timeout_ms=30_000))
    facts = await ok(tokens.tenant, "memoryd.v1.FormationService.ListFacts", form.ListFactsRequest(user_id="bob"))
    bob_fact = [f.id for f in facts.facts if f.text == f"user's secret is {bob_secret}"]
    assert len(bob_fact) == 1, facts
    records = await ok(tokens.tenant, "memoryd.v1.FormationService.ListCustomRecords", form.ListCustomRecordsRequest(user_id="bob"))
    bob_record = [r.id for r in records.records if r.value["item"] == bob_secret]
    assert len(bob_record) == 1, records
    return World(
        tag, bob_s, tenant_s, alice_s,
        bob_ids, [m.timestamp for m in bob.messages], [m.id for m in tenant.messages],
        [alice.message.id], entry.entry.id, bob_fact[0], bob_record[0], [bob_secret, tenant_secret],
    )  # fmt: skip


async def victim_state(t: GrpcTransport, tokens: Tokens, world: World) -> dict:
    """Bob's and the tenant's stored state, read with the tenant's (unbound) token."""

    async def read(name: str, request: Message) -> bytes:
        result = await t.call(tokens.tenant, name, request)
        assert not isinstance(result, Refusal), (name, result)
        return result.SerializeToString(deterministic=True)

    state: dict[str, Any] = {}
    for session in world.victim_sessions:
        state[session] = [
            await read("memoryd.v1.MemoryService.GetFullHistory", mem.GetFullHistoryRequest(session_id=session, page_size=1000)),
            await read("memoryd.v1.MemoryService.GetSession", mem.GetSessionRequest(session_id=session)),
            await read("memoryd.v1.SummaryService.ListSummaries", summ.ListSummariesRequest(session_id=session)),
            await read(
                "memoryd.v1.VectorService.SearchMemory",
                vec.SearchMemoryRequest(query_vector=[1.0, 0.5, 0.25], model_id=MODEL, top_k=100, min_score=-1,
                                        scope=vec.RECALL_SCOPE_SESSION, session_id=session, context_window=0),
            ),
        ]  # fmt: skip
    for namespace in ("users/bob/notes", f"config-{world.tag}"):
        state[namespace] = await read("memoryd.v1.MetadataService.ListMetadata", meta.ListMetadataRequest(namespace=namespace))
    for scope in ("bob", "shared"):
        state[scope] = await read("memoryd.v1.EntryService.ListEntries", ent.ListEntriesRequest(scope=scope))
    state["bob's facts"] = await read("memoryd.v1.FormationService.ListFacts",
                                      form.ListFactsRequest(user_id="bob", include_superseded=True, page_size=1000))
    state["bob's records"] = await read("memoryd.v1.FormationService.ListCustomRecords",
                                        form.ListCustomRecordsRequest(user_id="bob", page_size=1000))
    state["bob's profile"] = await read("memoryd.v1.FormationService.GetProfile", form.GetProfileRequest(user_id="bob"))
    state["settings"] = await read("memoryd.v1.FormationService.GetFormationSettings", form.GetFormationSettingsRequest())
    return state


# -- the attacks ----------------------------------------------------------------------------


@dataclass
class Attack:
    transport: Any
    token: str
    world: World
    checks: int = 0
    crossings: list[str] = field(default_factory=list)

    async def refused(self, name: str, request: Message, field_name: str | None = None) -> None:
        """The call must answer PERMISSION_DENIED, USER_ACCESS_DENIED (naming `field_name`)."""
        self.checks += 1
        result = await self.transport.call(self.token, name, request)
        if not isinstance(result, Refusal):
            self.crossings.append(f"{name} ran: {self._leak(result) or 'no leak, but it ran'}")
            return
        if (result.code, result.reason) != ("permission_denied", "USER_ACCESS_DENIED"):
            self.crossings.append(f"{name} answered {result}")
        elif field_name is not None and result.field != field_name:
            self.crossings.append(f"{name} named field {result.field!r}, not {field_name!r}")

    async def clean(self, name: str, request: Message) -> Message | None:
        """The call must succeed and carry nothing of bob's or the tenant's."""
        self.checks += 1
        result = await self.transport.call(self.token, name, request)
        if isinstance(result, Refusal):
            self.crossings.append(f"{name} refused: {result}")
            return None
        leak = self._leak(result)
        if leak:
            self.crossings.append(f"{name} leaked {leak}")
        return result

    def expect(self, condition: bool, what: str) -> None:
        self.checks += 1
        if not condition:
            self.crossings.append(what)

    def _leak(self, result: Message) -> str:
        raw = result.SerializeToString()
        return ", ".join(m.decode() for m in self.world.markers() if m in raw)


Case = Callable[[Attack], Awaitable[None]]
CASES: dict[str, Case] = {}


def case(*names: str) -> Callable[[Case], Case]:
    def register(fn: Case) -> Case:
        for name in names:
            CASES[f"memoryd.v1.{name}"] = fn
        return fn

    return register


def _msg(content: str = "x") -> message_pb2.Message:
    return message_pb2.Message(role="user", content=content)


@case("MemoryService.SaveMessage", "MemoryService.SaveMessages", "MemoryService.UpdateSession")
async def _writes_that_may_create_a_session(a: Attack) -> None:
    w = a.world
    for session in w.victim_sessions:
        await a.refused("memoryd.v1.MemoryService.SaveMessage", mem.SaveMessageRequest(session_id=session, message=_msg()), "session_id")
        await a.refused("memoryd.v1.MemoryService.SaveMessages", mem.SaveMessagesRequest(session_id=session, messages=[_msg()]))
        await a.refused("memoryd.v1.MemoryService.UpdateSession", mem.UpdateSessionRequest(session_id=session, attributes=message_pb2.SessionAttributes(agent_id="a")))
    fresh = f"fresh-{uuid.uuid4().hex[:8]}"
    # A new session may be made alice's only: never bob's.
    bobs = message_pb2.SessionAttributes(user_id="bob")
    await a.refused("memoryd.v1.MemoryService.SaveMessage",
                    mem.SaveMessageRequest(session_id=fresh, message=_msg(), session_attributes=bobs), "session_attributes.user_id")
    await a.refused("memoryd.v1.MemoryService.UpdateSession", mem.UpdateSessionRequest(session_id=fresh, attributes=bobs), "attributes.user_id")
    saved = await a.clean("memoryd.v1.MemoryService.SaveMessage", mem.SaveMessageRequest(session_id=fresh, message=_msg("mine")))
    a.expect(saved is not None and saved.message.seq == 1, "alice could not start a session of her own")


@case("MemoryService.GetHistory", "MemoryService.GetFullHistory", "MemoryService.ListMessagesInRange", "MemoryService.GetSession")
async def _session_reads(a: Attack) -> None:
    for session in a.world.victim_sessions:
        await a.refused("memoryd.v1.MemoryService.GetHistory", mem.GetHistoryRequest(session_id=session, limit=1000), "session_id")
        await a.refused("memoryd.v1.MemoryService.GetFullHistory", mem.GetFullHistoryRequest(session_id=session))
        await a.refused("memoryd.v1.MemoryService.ListMessagesInRange",
                        mem.ListMessagesInRangeRequest(session_id=session, from_ts=0, to_ts=FAR_FUTURE))
        await a.refused("memoryd.v1.MemoryService.GetSession", mem.GetSessionRequest(session_id=session))
    never = f"never-{uuid.uuid4().hex[:8]}"  # a session no one wrote reads as empty
    history = await a.clean("memoryd.v1.MemoryService.GetHistory", mem.GetHistoryRequest(session_id=never))
    a.expect(history is not None and not history.messages, "an unwritten session was not empty")
    found = await a.clean("memoryd.v1.MemoryService.GetSession", mem.GetSessionRequest(session_id=never))
    a.expect(found is not None and not found.found, "an unwritten session was found")


@case(
    "MemoryService.TrimHistory", "MemoryService.ReplaceHistory", "MemoryService.UpdateMessageContent",
    "MemoryService.DeleteMessagesByTimestamps", "MemoryService.DeleteMessages", "MemoryService.ClearSession",
    "MemoryService.PopMessages",
)  # fmt: skip
async def _session_writes(a: Attack) -> None:
    w = a.world
    for session in w.victim_sessions:
        ids = w.bob_ids if session == w.bob_session else w.tenant_ids
        await a.refused("memoryd.v1.MemoryService.TrimHistory", mem.TrimHistoryRequest(session_id=session, keep_recent=0))
        await a.refused("memoryd.v1.MemoryService.ReplaceHistory", mem.ReplaceHistoryRequest(session_id=session, messages=[_msg()]))
        await a.refused("memoryd.v1.MemoryService.UpdateMessageContent",
                        mem.UpdateMessageContentRequest(session_id=session, old_text="words", new_text="pwned"))
        await a.refused("memoryd.v1.MemoryService.DeleteMessagesByTimestamps",
                        mem.DeleteMessagesByTimestampsRequest(session_id=session, timestamps=w.bob_timestamps))
        await a.refused("memoryd.v1.MemoryService.DeleteMessages", mem.DeleteMessagesRequest(session_id=session, ids=ids))
        await a.refused("memoryd.v1.MemoryService.ClearSession",
                        mem.ClearSessionRequest(session_id=session, targets=[mem.CLEAR_TARGET_MESSAGES, mem.CLEAR_TARGET_METADATA, mem.CLEAR_TARGET_VECTORS]))
        await a.refused("memoryd.v1.MemoryService.PopMessages", mem.PopMessagesRequest(session_id=session, n=10))


@case("MemoryService.ClearAll", "MemoryService.ForgetUser", "VectorService.GetVectorStats", "MemoryService.GetMemoryStats")
async def _tenant_wide(a: Attack) -> None:
    await a.refused("memoryd.v1.MemoryService.ClearAll", mem.ClearAllRequest(targets=[mem.CLEAR_TARGET_MESSAGES]))
    for user in ("bob", "alice"):  # an operator's call, forgetting someone: never a user's token
        await a.refused("memoryd.v1.MemoryService.ForgetUser", mem.ForgetUserRequest(user_id=user))
    await a.refused("memoryd.v1.VectorService.GetVectorStats", vec.GetVectorStatsRequest())
    await a.refused("memoryd.v1.MemoryService.GetMemoryStats", mem.GetMemoryStatsRequest())  # tenant-wide counts


@case("MemoryService.GetCaller")
async def _who_am_i(a: Attack) -> None:
    caller = await a.clean("memoryd.v1.MemoryService.GetCaller", mem.GetCallerRequest())
    a.expect(caller is not None and caller.user_id == "alice", "GetCaller did not name the token's end user")


@case("MemoryService.GetRecentAcrossSessions", "MemoryService.ListSessions")
async def _reads_across_sessions(a: Attack) -> None:
    w = a.world
    recent = await a.clean("memoryd.v1.MemoryService.GetRecentAcrossSessions", mem.GetRecentAcrossSessionsRequest(limit=1000, roles=ROLES))
    mine = {m.message.id for m in recent.messages} if recent else set()
    a.expect(set(w.alice_ids) <= mine, "alice's own message is missing from GetRecentAcrossSessions")
    await a.clean("memoryd.v1.MemoryService.GetRecentAcrossSessions", mem.GetRecentAcrossSessionsRequest(limit=1000, platform="qq", roles=ROLES))
    listed = await a.clean("memoryd.v1.MemoryService.ListSessions", mem.ListSessionsRequest(page_size=1000))
    a.expect(listed is not None and w.alice_session in {s.session_id for s in listed.sessions}, "alice's session is not listed")
    a.expect(listed is not None and {s.attributes.user_id for s in listed.sessions} == {"alice"}, "another user's session was listed")
    ranged = await a.clean("memoryd.v1.MemoryService.ListSessions", mem.ListSessionsRequest(page_size=1000, active_since=0))
    a.expect(ranged is not None and {s.attributes.user_id for s in ranged.sessions} == {"alice"}, "a time range listed another user's session")
    theirs = await a.clean("memoryd.v1.MemoryService.ListSessions", mem.ListSessionsRequest(user_id="bob"))
    a.expect(theirs is not None and not theirs.sessions, "ListSessions(user_id=bob) listed sessions")


@case("MetadataService.SaveMetadata", "MetadataService.GetMetadata", "MetadataService.ListMetadata",
      "MetadataService.DeleteMetadata", "MetadataService.ListNamespaces")  # fmt: skip
async def _metadata(a: Attack) -> None:
    for namespace in ("users/bob/notes", f"config-{a.world.tag}", "users/alice", "users/alicex/notes"):
        await a.refused("memoryd.v1.MetadataService.SaveMetadata", meta.SaveMetadataRequest(namespace=namespace, key="k"), "namespace")
        await a.refused("memoryd.v1.MetadataService.GetMetadata", meta.GetMetadataRequest(namespace=namespace, key="k"))
        await a.refused("memoryd.v1.MetadataService.DeleteMetadata", meta.DeleteMetadataRequest(namespace=namespace, key="k"))
        await a.refused("memoryd.v1.MetadataService.ListMetadata", meta.ListMetadataRequest(namespace=namespace))
    for prefix in ("", "users/", "users/alice", "users/b"):
        await a.refused("memoryd.v1.MetadataService.ListMetadata", meta.ListMetadataRequest(namespace_prefix=prefix), "namespace_prefix")
        await a.refused("memoryd.v1.MetadataService.ListNamespaces", meta.ListNamespacesRequest(prefix=prefix), "prefix")
    mine = await a.clean("memoryd.v1.MetadataService.ListNamespaces", meta.ListNamespacesRequest(prefix="users/alice/"))
    a.expect(mine is not None and list(mine.namespaces) == ["users/alice/notes"], "alice's own namespace is not listed")
    await a.clean("memoryd.v1.MetadataService.ListMetadata", meta.ListMetadataRequest(namespace_prefix="users/alice/"))


@case("EventService.Watch", "EventService.PublishEvent")
async def _events(a: Attack) -> None:
    w = a.world
    for session in w.victim_sessions:
        await a.refused("memoryd.v1.EventService.PublishEvent",
                        ev.PublishEventRequest(session_id=session, compress_requested=event_pb2.CompressRequested()), "session_id")
    # The whole log from the start, without and with a session filter naming bob's sessions:
    # only alice's events, up to a marker she publishes in her own session.
    for request in (ev.WatchRequest(after_seq=0), ev.WatchRequest(after_seq=0, session_ids=[*w.victim_sessions, w.alice_session])):
        events = await a.transport.watch(a.token, request, await publish_marker(a.transport, a.token, w.alice_session))
        a.checks += 1
        # Events of no session reach her only when they are about her (formed memory, keyed by user).
        foreign = [e for e in events if not (_alices(e.session_id) if e.session_id else _about_alice(e))]
        leaks = [e for e in events if any(m in e.SerializeToString() for m in w.markers())]
        if foreign or leaks:
            a.crossings.append(f"Watch delivered {len(foreign)} events of other sessions, {len(leaks)} with bob's or the tenant's data")
        a.expect(any(e.type == event_pb2.EVENT_TYPE_MESSAGES_APPENDED for e in events), "alice's own appends were not watched")
        a.expect(any(e.type == event_pb2.EVENT_TYPE_MEMORY_FORMED and e.memory_formed.kind == "fact" for e in events),
                 "alice's own formed facts were not watched")  # fmt: skip


def _about_alice(event: event_pb2.Event) -> bool:
    kind = event.WhichOneof("payload")
    return kind in ("memory_formed", "memory_superseded", "memory_removed") and getattr(event, kind).user_id == "alice"


@case("VectorService.UpsertVectors", "VectorService.SearchMemory", "VectorService.DeleteVectors")
async def _vectors(a: Attack) -> None:
    w = a.world
    point = vec.VectorPoint(model_id=MODEL, vector=[1.0, 0.0, 0.0], session_id=w.bob_session, timestamp=5)
    own = vec.VectorPoint(model_id=MODEL, vector=[1.0, 0.0, 0.0], session_id=w.alice_session, timestamp=5)
    await a.refused("memoryd.v1.VectorService.UpsertVectors", vec.UpsertVectorsRequest(points=[point]), "points.session_id")
    await a.refused("memoryd.v1.VectorService.UpsertVectors", vec.UpsertVectorsRequest(points=[own, point]))
    bob_like = [1.0, 0.5, 0.25]
    for scope, extra in (
        (vec.RECALL_SCOPE_ALL, {}),
        (vec.RECALL_SCOPE_SESSION, {"session_id": w.bob_session}),
        (vec.RECALL_SCOPE_USER, {"speaker_ids": [f"speaker-{w.bob_session}", f"speaker-{w.tenant_session}"]}),
        (vec.RECALL_SCOPE_PLATFORM, {"platform": "qq"}),
    ):
        await a.clean("memoryd.v1.VectorService.SearchMemory",
                      vec.SearchMemoryRequest(query_vector=bob_like, model_id=MODEL, top_k=100, min_score=-1, scope=scope, **extra))
    await a.clean("memoryd.v1.VectorService.SearchMemory", vec.SearchMemoryRequest(query_text=f"{w.secrets[0]} {w.secrets[1]} words", top_k=100))
    for slices in (vec.RECALL_SLICES_FUSED, vec.RECALL_SLICES_FIRST):
        await a.clean("memoryd.v1.VectorService.SearchMemory",
                      vec.SearchMemoryRequest(query_text=f"{w.secrets[0]} {w.secrets[1]} words", query_vector=bob_like,
                                              model_id=MODEL, top_k=100, slices=slices))  # fmt: skip
    found = await a.clean("memoryd.v1.VectorService.SearchMemory",
                          vec.SearchMemoryRequest(query_vector=bob_like, model_id=MODEL, top_k=100, min_score=-1, context_window=0))
    a.expect(found is not None and set(w.alice_ids) <= {h.message_id for h in found.hits}, "alice's own vector was not found")
    for selector in (
        {"session": vec.DeleteVectorsRequest.BySession(session_id=w.bob_session)},
        {"timestamps": vec.DeleteVectorsRequest.ByTimestamps(session_id=w.bob_session, timestamps=w.bob_timestamps)},
        {"model": vec.DeleteVectorsRequest.ByModel(model_id=MODEL)},
        {"all": vec.DeleteVectorsRequest.All()},
    ):
        await a.refused("memoryd.v1.VectorService.DeleteVectors", vec.DeleteVectorsRequest(**selector))


@case("SummaryService.SaveSummary", "SummaryService.ListSummaries", "SummaryService.GetSummaryCursor", "SummaryService.AssembleContext")
async def _summaries(a: Attack) -> None:
    w = a.world
    for session in w.victim_sessions:
        await a.refused("memoryd.v1.SummaryService.SaveSummary", summ.SaveSummaryRequest(session_id=session, from_seq=1, to_seq=4, text="x"))
        await a.refused("memoryd.v1.SummaryService.ListSummaries", summ.ListSummariesRequest(session_id=session))
        await a.refused("memoryd.v1.SummaryService.GetSummaryCursor", summ.GetSummaryCursorRequest(session_id=session))
        await a.refused("memoryd.v1.SummaryService.AssembleContext", summ.AssembleContextRequest(session_id=session, budget_chars=100_000))
    # Recall from alice's own session searches her sessions only.
    assembled = await a.clean(
        "memoryd.v1.SummaryService.AssembleContext",
        summ.AssembleContextRequest(session_id=w.alice_session, budget_chars=100_000, include_recall=True,
                                    recall_query_vector=[1.0, 0.5, 0.25], recall_model_id=MODEL),
    )  # fmt: skip
    a.expect(assembled is not None and all(_alices(r.session_id) for r in assembled.recalled), "recall left alice's sessions")


@case("SummaryService.SearchSummaries")
async def _summary_search(a: Attack) -> None:
    w = a.world
    bob_like = [1.0, 0.5, 0.25]
    for extra in ({}, {"scope": vec.RECALL_SCOPE_SESSION, "session_id": w.bob_session},
                  {"scope": vec.RECALL_SCOPE_SESSION, "session_id": w.tenant_session}):  # fmt: skip
        for query in ({"query_text": f"{w.secrets[0]} {w.secrets[1]}", "keyword_weight": 1.0},
                      {"query_vector": bob_like, "model_id": MODEL, "keyword_weight": 0.0}):  # fmt: skip
            await a.clean("memoryd.v1.SummaryService.SearchSummaries",
                          summ.SearchSummariesRequest(top_k=100, include_messages=True, **query, **extra))  # fmt: skip
    mine = await a.clean("memoryd.v1.SummaryService.SearchSummaries",
                         summ.SearchSummariesRequest(query_text=f"alice own summary {w.tag}", include_messages=True))  # fmt: skip
    found = [h.summary.session_id for h in mine.hits] if mine is not None else []
    a.expect(found[:1] == [w.alice_session] and all(_alices(s) for s in found), "alice's own slice was not found")
    a.expect(mine is not None and mine.hits and [m.id for m in mine.hits[0].messages] == w.alice_ids,
             "alice's slice did not bring her own message")  # fmt: skip


@case("EntryService.SaveEntry", "EntryService.SearchEntries", "EntryService.ForgetEntry", "EntryService.ListEntries")
async def _entries(a: Attack) -> None:
    w = a.world
    for scope in ("bob", "shared", "alicex", ""):
        await a.refused("memoryd.v1.EntryService.SaveEntry", ent.SaveEntryRequest(scope=scope, text="x"), "scope" if scope else None)
        await a.refused("memoryd.v1.EntryService.SearchEntries", ent.SearchEntriesRequest(scope=scope, query=w.secrets[0]))
        await a.refused("memoryd.v1.EntryService.ForgetEntry", ent.ForgetEntryRequest(scope=scope, entry_id=w.bob_entry_id))
        await a.refused("memoryd.v1.EntryService.ListEntries", ent.ListEntriesRequest(scope=scope))
    mine = await a.clean("memoryd.v1.EntryService.ListEntries", ent.ListEntriesRequest(scope="alice"))
    a.expect(mine is not None and len(mine.entries) >= 1, "alice's own entry is not listed")


@case("FormationService.ListFacts", "FormationService.GetProfile", "FormationService.UpdateFact", "FormationService.DeleteFact")
async def _formed_memory(a: Attack) -> None:
    w = a.world
    await a.refused("memoryd.v1.FormationService.ListFacts", form.ListFactsRequest(user_id="bob", include_superseded=True), "user_id")
    await a.refused("memoryd.v1.FormationService.GetProfile", form.GetProfileRequest(user_id="bob"), "user_id")
    await a.refused("memoryd.v1.FormationService.UpdateFact",
                    form.UpdateFactRequest(user_id="bob", fact_id=w.bob_fact_id, text="pwned"), "user_id")
    await a.refused("memoryd.v1.FormationService.DeleteFact", form.DeleteFactRequest(user_id="bob", fact_id=w.bob_fact_id), "user_id")
    # Bob's fact named as alice's is no fact of hers: not found, not changed, not deleted.
    a.checks += 1
    updated = await a.transport.call(a.token, "memoryd.v1.FormationService.UpdateFact",
                                     form.UpdateFactRequest(user_id="alice", fact_id=w.bob_fact_id, text="pwned"))
    if not isinstance(updated, Refusal) or updated.code != "not_found":
        a.crossings.append(f"UpdateFact of bob's fact as alice's answered {updated}")
    deleted = await a.clean("memoryd.v1.FormationService.DeleteFact", form.DeleteFactRequest(user_id="alice", fact_id=w.bob_fact_id))
    a.expect(deleted is not None and not deleted.deleted, "DeleteFact removed bob's fact as alice's")
    for session in ("", *w.victim_sessions):
        await a.clean("memoryd.v1.FormationService.ListFacts",
                      form.ListFactsRequest(user_id="alice", session_id=session, include_superseded=True))
    mine = await a.clean("memoryd.v1.FormationService.ListFacts", form.ListFactsRequest(user_id="alice"))
    a.expect(mine is not None and f"user's color is blue{w.tag}" in {f.text for f in mine.facts}, "alice's own fact is not listed")
    profile = await a.clean("memoryd.v1.FormationService.GetProfile", form.GetProfileRequest(user_id="alice"))
    a.expect(profile is not None and f"blue{w.tag}" in profile.profile.text, "alice's own profile is not hers")


@case("FormationService.ListCustomRecords", "FormationService.DeleteCustomRecord")
async def _custom_records(a: Attack) -> None:
    w = a.world
    for strategy in ("", "likes"):
        await a.refused("memoryd.v1.FormationService.ListCustomRecords",
                        form.ListCustomRecordsRequest(user_id="bob", strategy=strategy), "user_id")
    await a.refused("memoryd.v1.FormationService.DeleteCustomRecord",
                    form.DeleteCustomRecordRequest(user_id="bob", record_id=w.bob_record_id), "user_id")
    # Bob's record named as alice's is no record of hers: not deleted.
    deleted = await a.clean("memoryd.v1.FormationService.DeleteCustomRecord",
                            form.DeleteCustomRecordRequest(user_id="alice", record_id=w.bob_record_id))
    a.expect(deleted is not None and not deleted.deleted, "DeleteCustomRecord removed bob's record as alice's")
    for session in ("", *w.victim_sessions):
        listed = await a.clean("memoryd.v1.FormationService.ListCustomRecords",
                               form.ListCustomRecordsRequest(user_id="alice", session_id=session))
        a.expect(listed is not None and not listed.records, "alice listed records she has none of")


@case("FormationService.WaitForFormation", "FormationService.GetFormationStatus",
      "FormationService.GetFormationSettings", "FormationService.SetFormationSettings")  # fmt: skip
async def _formation_control(a: Attack) -> None:
    w = a.world
    # Waiting reveals positions in the tenant's log only, which every token's writes return.
    await a.clean("memoryd.v1.FormationService.WaitForFormation", form.WaitForFormationRequest(event_seq=1, timeout_ms=10_000))
    # Status (usage, errors) and settings are the tenant's: an operator's calls.
    await a.refused("memoryd.v1.FormationService.GetFormationStatus", form.GetFormationStatusRequest())
    for session in ("", *w.victim_sessions, w.alice_session):
        await a.refused("memoryd.v1.FormationService.GetFormationSettings", form.GetFormationSettingsRequest(session_id=session))
        await a.refused("memoryd.v1.FormationService.SetFormationSettings",
                        form.SetFormationSettingsRequest(session_id=session, settings=form.FormationSettings(facts_enabled=False)))


def test_every_served_rpc_has_an_attack():
    missing, stale = sorted(SERVED - set(CASES)), sorted(set(CASES) - SERVED)
    assert not missing, f"add a case to tests/security/test_user_isolation.py for {missing}"
    assert not stale, f"cases of RPCs no longer served: {stale}"


# -- running the matrix -----------------------------------------------------------------------


@pytest.fixture(scope="module", params=BACKENDS)
async def served(request, tmp_path_factory):
    tokens = Tokens()
    uri = "" if request.param == "sqlite" else mongo_uri_for(request.param, request)
    llm = ScriptedLLM(Model()).__enter__()  # memory formation on: formed facts and profiles are attacked too
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path_factory.mktemp("users"),
        mongodb_uri=uri,
        mongodb_database=f"memoryd_users_{uuid.uuid4().hex[:8]}",
        tokens=tokens.text(),
        log_level="warning",
        llm_url=llm.url,
        llm_model=llm.model,
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=60) as http:
        yield request.param, app, tokens, GrpcTransport(channel), HttpTransport(http)
    await channel.close()
    await app.stop(0)
    llm.close()


@pytest.mark.parametrize("transport", ["grpc", "http"])
async def test_alice_reaches_nothing_of_bob_or_the_tenant(served, transport):
    backend, app, tokens, grpc_transport, http_transport = served
    if transport == "http" and backend != "sqlite":
        pytest.skip("the HTTP transport runs the same servicers; once, on SQLite")
    world = await build_world(grpc_transport, tokens)
    before = await victim_state(grpc_transport, tokens, world)
    bob_from = (await app.store.event_bounds("acme"))[1]
    attack = Attack(grpc_transport if transport == "grpc" else http_transport, tokens.alice, world)
    for run in dict.fromkeys(CASES[name] for name in sorted(SERVED)):  # each case once, however many RPCs it covers
        await run(attack)
    assert await victim_state(grpc_transport, tokens, world) == before, "bob's or the tenant's data changed"
    # Bob's own watch, from before the attacks: his events only (none of alice's).
    marker = await publish_marker(grpc_transport, tokens.bob, world.bob_session)
    bobs = await grpc_transport.watch(tokens.bob, ev.WatchRequest(after_seq=bob_from), marker)
    attack.expect(all(e.session_id == world.bob_session for e in bobs), "bob's watch delivered alice's events")
    print(f"\n{backend}/{transport}: {len(SERVED)} RPCs, {attack.checks} checks, {len(attack.crossings)} crossings")
    assert not attack.crossings, "\n".join(attack.crossings)


# -- through the MCP server -------------------------------------------------------------------

MCP_CASES: dict[str, Callable[[Any, World], Awaitable[list[tuple[str, Any]]]]] = {}


def mcp_case(tool: str):
    def register(fn):
        MCP_CASES[tool] = fn
        return fn

    return register


# Each returns (what, outcome) pairs; an outcome is the tool error's text or the result's JSON.
@mcp_case("memory_save")
async def _mcp_save(session, w: World):
    return [(f"memory_save {scope}", await _tool(session, "memory_save", scope=scope, text="x")) for scope in ("bob", "shared")]


@mcp_case("memory_search")
async def _mcp_search(session, w: World):
    return [(f"memory_search {s}", await _tool(session, "memory_search", scope=s, query=w.secrets[0])) for s in ("bob", "shared")]


@mcp_case("memory_forget")
async def _mcp_forget(session, w: World):
    return [("memory_forget bob", await _tool(session, "memory_forget", scope="bob", entry_id=w.bob_entry_id))]


@mcp_case("user_facts")
async def _mcp_facts(session, w: World):
    return [("user_facts bob", await _tool(session, "user_facts", user_id="bob", include_superseded=True))]


@mcp_case("user_profile")
async def _mcp_profile(session, w: World):
    return [("user_profile bob", await _tool(session, "user_profile", user_id="bob"))]


@mcp_case("history")
async def _mcp_history(session, w: World):
    return [(f"history {s}", await _tool(session, "history", session_id=s)) for s in w.victim_sessions]


@mcp_case("assemble_context")
async def _mcp_assemble(session, w: World):
    return [(f"assemble_context {s}", await _tool(session, "assemble_context", session_id=s)) for s in w.victim_sessions]


@mcp_case("recall")
async def _mcp_recall(session, w: World):
    query = f"{w.secrets[0]} {w.secrets[1]} words"
    return [
        ("recall all", await _tool(session, "recall", query=query, top_k=50)),
        ("recall bob's session", await _tool(session, "recall", query=query, session_id=w.bob_session, scope="session")),
    ]


async def _tool(session, tool: str, **arguments) -> tuple[bool, str]:
    result = await session.call_tool(tool, arguments)
    return result.is_error, result.content[0].text if result.content else json.dumps(result.structured_content)


async def test_through_the_mcp_server_alice_reaches_nothing_of_bob_or_the_tenant(served, tmp_path):
    import sys
    from pathlib import Path

    from tests.clients.test_mcp_server import http_session
    from tests.processes import ServerProcess

    backend, app, tokens, grpc_transport, _ = served
    if backend != "sqlite":
        pytest.skip("the MCP server is a client of the servicers above; once, on SQLite")
    world = await build_world(grpc_transport, tokens)
    before = await victim_state(grpc_transport, tokens, world)
    mcp = ServerProcess(
        [str(Path(sys.executable).parent / "memoryd-mcp"), "--transport", "http", "--port", "0", "--target", f"127.0.0.1:{app.port}"],
        tmp_path,
        name="memoryd-mcp",
    )
    mcp.start()
    crossings, checks = [], 0
    try:
        async with http_session(f"http://{mcp.target}/mcp", tokens.alice) as session:
            tools = {t.name for t in (await session.list_tools()).tools}
            assert tools == set(MCP_CASES), f"add a case for the MCP tools {sorted(tools - set(MCP_CASES))}"
            for tool in sorted(tools):
                for what, (is_error, text) in await MCP_CASES[tool](session, world):
                    checks += 1
                    # A refusal may quote the session id alice sent; nothing else of theirs.
                    quoted = set(world.victim_sessions) if is_error else set()
                    leaked = [m.decode() for m in world.markers() if m.decode() in text and m.decode() not in quoted]
                    if leaked:
                        crossings.append(f"{what} leaked {leaked}")
                    elif is_error and "PERMISSION_DENIED USER_ACCESS_DENIED" not in text:
                        crossings.append(f"{what} failed otherwise: {text}")
                    elif not is_error and not tool.startswith("recall"):
                        crossings.append(f"{what} ran")
            mine = await _tool(session, "history", session_id=world.alice_session)
            assert not mine[0] and f"alice own words {world.tag}" in mine[1]  # alice's own session is hers
    finally:
        mcp.terminate()
    assert await victim_state(grpc_transport, tokens, world) == before
    print(f"\n{backend}/mcp: {len(MCP_CASES)} tools, {checks} checks, {len(crossings)} crossings")
    assert not crossings, "\n".join(crossings)
