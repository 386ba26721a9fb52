"""Shared by the security, fault and property suites: an in-process memoryd with bearer
tokens, per-tenant callers, rich-error decoding and a snapshot of what a tenant stores."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from google.rpc import error_details_pb2, status_pb2

from memoryd.v1 import event_service_pb2 as ev_pb
from memoryd.v1 import entry_service_pb2 as entry_pb
from memoryd.v1 import entry_service_pb2_grpc, summary_service_pb2_grpc, vector_service_pb2_grpc
from memoryd.v1 import event_service_pb2_grpc, memory_service_pb2_grpc, metadata_service_pb2_grpc
from memoryd.v1 import summary_service_pb2 as sum_pb
from memoryd.v1 import vector_service_pb2 as vec_pb
from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import metadata_service_pb2 as meta_pb
from memoryd.app import App, start
from memoryd.config import Config
from memoryd.domain.limits import Limits


def new_token() -> str:
    return secrets.token_urlsafe(24)


def tokens_text(tokens: dict[str, str]) -> str:
    return "\n".join(f"{tenant}: {token}" for tenant, token in tokens.items())


async def start_app(
    data_dir: Path, tokens: dict[str, str] | None = None, *, mongodb_uri: str = "", limits: Limits | None = None
) -> App:
    config = Config(
        listen="127.0.0.1:0",
        data_dir=data_dir,
        mongodb_uri=mongodb_uri,
        mongodb_database=f"memoryd_sec_{uuid.uuid4().hex[:8]}",
        tokens=tokens_text(tokens or {}),
        limits=limits or Limits(),
    )
    return await start(config)


@dataclass
class Caller:
    """Stubs bound to one channel, sending one tenant's bearer token on every call."""

    channel: grpc.aio.Channel
    token: str | None = None
    tenant: str = "default"
    memory: memory_service_pb2_grpc.MemoryServiceStub = field(init=False)
    metadata: metadata_service_pb2_grpc.MetadataServiceStub = field(init=False)
    events: event_service_pb2_grpc.EventServiceStub = field(init=False)
    vectors: vector_service_pb2_grpc.VectorServiceStub = field(init=False)
    summaries: summary_service_pb2_grpc.SummaryServiceStub = field(init=False)
    entries: entry_service_pb2_grpc.EntryServiceStub = field(init=False)

    def __post_init__(self) -> None:
        self.memory = memory_service_pb2_grpc.MemoryServiceStub(self.channel)
        self.metadata = metadata_service_pb2_grpc.MetadataServiceStub(self.channel)
        self.events = event_service_pb2_grpc.EventServiceStub(self.channel)
        self.vectors = vector_service_pb2_grpc.VectorServiceStub(self.channel)
        self.summaries = summary_service_pb2_grpc.SummaryServiceStub(self.channel)
        self.entries = entry_service_pb2_grpc.EntryServiceStub(self.channel)

    @property
    def auth(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    def stub(self, service: str):
        return getattr(self, service)

    async def call(self, service: str, method: str, request, timeout: float = 15.0):
        return await getattr(self.stub(service), method)(request, metadata=self.auth, timeout=timeout)

    def watch(self, request: ev_pb.WatchRequest, timeout: float = 30.0):
        return self.events.Watch(request, metadata=self.auth, timeout=timeout)


def rich_status(error: grpc.aio.AioRpcError) -> status_pb2.Status | None:
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            return status_pb2.Status.FromString(value)
    return None


def error_details(error: grpc.aio.AioRpcError) -> tuple[str | None, list[str]]:
    """(ErrorInfo.reason, BadRequest field names) of a failed call."""
    status = rich_status(error)
    reason, fields = None, []
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason = info.reason
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [v.field for v in bad.field_violations]
    return reason, fields


async def snapshot(app: App, caller: Caller, namespaces: tuple[str, ...] = (), scopes: tuple[str, ...] = ()) -> dict:
    """Everything a tenant stores, read through the API (plus the event log's bounds): sessions,
    full histories, summaries, metadata of `namespaces`, entries of `scopes`, vector counts."""
    sessions = []
    token = ""
    while True:
        page = await caller.call("memory", "ListSessions", mem_pb.ListSessionsRequest(page_size=1000, page_token=token))
        sessions += [
            (s.session_id, s.message_count, s.unarchived_count, s.last_activity, s.attributes.SerializeToString(deterministic=True))
            for s in page.sessions
        ]
        token = page.next_page_token
        if not token:
            break
    histories = {}
    for session_id, *_ in sessions:
        messages, token = [], ""
        while True:
            page = await caller.call(
                "memory", "GetFullHistory", mem_pb.GetFullHistoryRequest(session_id=session_id, page_size=1000, page_token=token)
            )
            messages += [m.SerializeToString(deterministic=True) for m in page.messages]
            token = page.next_page_token
            if not token:
                break
        histories[session_id] = messages
    summaries = {}
    for session_id in histories:
        page = await caller.call("summaries", "ListSummaries", sum_pb.ListSummariesRequest(session_id=session_id, page_size=1000))
        summaries[session_id] = [x.SerializeToString(deterministic=True) for x in page.summaries]
    entries = {}
    for scope in scopes:
        page = await caller.call("entries", "ListEntries", entry_pb.ListEntriesRequest(scope=scope, page_size=1000))
        entries[scope] = [x.SerializeToString(deterministic=True) for x in page.entries]
    stats = await caller.call("vectors", "GetVectorStats", vec_pb.GetVectorStatsRequest())
    metadata = {}
    for namespace in namespaces:
        page = await caller.call("metadata", "ListMetadata", meta_pb.ListMetadataRequest(namespace=namespace, page_size=1000))
        metadata[namespace] = [e.SerializeToString(deterministic=True) for e in page.entries]
    return {
        "sessions": sessions,
        "histories": histories,
        "metadata": metadata,
        "summaries": summaries,
        "entries": entries,
        "vectors": sorted((m.model_id, m.count, m.dimension) for m in stats.models),
        "events": await app.store.event_bounds(caller.tenant),
    }
