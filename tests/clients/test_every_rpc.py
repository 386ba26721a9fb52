"""Both Python clients cover every RPC of the contract, and retry exactly the idempotent ones.

The first test runs one scenario calling every typed method of MemoryClient and
of SyncMemoryClient (the same code drives both: a sync method's value is used as
is, an async one's is awaited) through a recording proxy, then checks that every
unary RPC of the six services went over the wire. The second injects one
UNAVAILABLE into each RPC and checks that gRPC retried it if and only if the
contract's service config classifies it as idempotent.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import message_factory

from memoryd.v1 import (
    entry_service_pb2,
    event_service_pb2,
    memory_service_pb2,
    metadata_service_pb2,
    summary_service_pb2,
    vector_service_pb2,
)
from memoryd_client import (
    DEFAULT_RETRY,
    ClearOutcome,
    ClearTarget,
    CompressRequested,
    InvalidArgumentError,
    MemoryClient,
    RecallScope,
    SyncMemoryClient,
    UnavailableError,
    VectorPoint,
    contract_service_config,
    retried_methods,
    message,
    session_attributes,
    to_dict,
)
from tests.clients.live import Fault, FaultProxy
from tests.processes import MemorydServer

ROOT = Path(__file__).resolve().parents[2]
SERVICES = [
    memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"],
    metadata_service_pb2.DESCRIPTOR.services_by_name["MetadataService"],
    event_service_pb2.DESCRIPTOR.services_by_name["EventService"],
    vector_service_pb2.DESCRIPTOR.services_by_name["VectorService"],
    summary_service_pb2.DESCRIPTOR.services_by_name["SummaryService"],
    entry_service_pb2.DESCRIPTOR.services_by_name["EntryService"],
]
UNARY = {
    f"/{service.full_name}/{method.name}": method
    for service in SERVICES
    for method in service.methods
    if not method.server_streaming
}


STUB_ATTRIBUTES = {
    "MemoryService": "memory",
    "MetadataService": "metadata",
    "EventService": "events",
    "VectorService": "vectors",
    "SummaryService": "summaries",
    "EntryService": "entries",
}
RETRIED = retried_methods(DEFAULT_RETRY)


async def resolve(value):
    """The value of a sync call, or the awaited result of an async one."""
    return await value if inspect.isawaitable(value) else value


async def collect(items: Iterator | AsyncIterator) -> list:
    if hasattr(items, "__aiter__"):
        return [item async for item in items]
    return list(items)


async def exercise_every_method(client: MemoryClient | SyncMemoryClient, tag: str) -> None:
    session, other = f"every-{tag}", f"every-{tag}-2"
    platform = f"platform-{tag}"  # only this run's messages carry it

    # MemoryService
    one, two = (await resolve(client.save_messages(other, [message("user", "q"), message("assistant", "a")]))).messages
    first = (await resolve(client.save_message(session, message("user", "alpha", timestamp=1_000)))).message
    batch = await resolve(
        client.save_messages(
            session,
            [
                message("assistant", "gamma ray", timestamp=2_000, metadata={"platform": platform}),
                message("user", "delta", timestamp=3_000, kind="note", metadata={"platform": platform}),
            ],
        )
    )
    assert not batch.deduplicated and [m.seq for m in batch.messages] == [first.seq + 1, first.seq + 2]
    assert [m.content for m in await resolve(client.get_history(session))] == ["alpha", "gamma ray", "delta"]
    page = await resolve(client.get_full_history(session, page_size=2))
    assert len(page.messages) == 2 and page.next_page_token
    assert [m.content for m in await collect(client.iter_full_history(session, page_size=2))] == ["alpha", "gamma ray", "delta"]
    in_range = await resolve(client.list_messages_in_range(session, 1_000, 2_000))
    assert [m.content for m in in_range.messages] == ["alpha", "gamma ray"]
    assert len(await collect(client.iter_messages_in_range(session, 0, 5_000, page_size=1))) == 3
    recent = await resolve(client.get_recent_across_sessions(10, platform=platform, exclude_kinds=["note"]))
    assert [(m.session_id, m.message.content) for m in recent] == [(session, "gamma ray")]
    assert await resolve(client.trim_history(session, keep_recent=2)) == 1
    assert await resolve(client.update_message_content(session, "gamma", "GAMMA")) == 1
    assert await resolve(client.delete_messages_by_timestamps(session, [3_000])) == 1
    assert await resolve(client.delete_messages(session, [first.id])) == 1
    replaced = await resolve(client.replace_history(session, [message("user", "fresh start", timestamp=4_000)]))
    fresh = replaced.messages[0]
    assert replaced.removed_count == 1 and fresh.content == "fresh start"
    page = await resolve(client.list_sessions(page_size=1))
    assert len(page.sessions) == 1 and page.next_page_token
    assert session in {info.session_id for info in await collect(client.iter_sessions(page_size=1))}
    owned, user = f"every-{tag}-owned", f"user-{tag}"
    await resolve(client.save_message(owned, message("user", "mine"), attributes=session_attributes(user, "agent", {"run": tag})))
    await resolve(client.save_messages(owned, [message("assistant", "yours")], attributes=session_attributes(labels={"turn": "2"})))
    info = await resolve(client.update_session(owned, session_attributes(labels={"lang": "en"}), remove_labels=["turn"]))
    assert (info.attributes.user_id, dict(info.attributes.labels)) == (user, {"run": tag, "lang": "en"})
    assert (await resolve(client.get_session(owned))).message_count == 2
    assert await resolve(client.get_session(f"{owned}-none")) is None
    assert [i.session_id for i in await collect(client.iter_sessions(user_id=user, labels={"lang": "en"}, page_size=1))] == [owned]
    active = (await resolve(client.get_session(owned))).last_activity
    assert [i.session_id for i in (await resolve(client.list_sessions(user_id=user, active_since=active))).sessions] == [owned]
    assert not (await resolve(client.list_sessions(user_id=user, active_before=active))).sessions
    stats = await resolve(client.get_memory_stats())
    assert stats.sessions >= 2 and stats.messages >= 3 and stats.session_retention.action in ("delete", "archive")
    popped = await resolve(client.pop_messages(owned))
    assert [m.content for m in popped.messages] == ["yours"] and not popped.truncated
    forgotten = await resolve(client.forget_user(user))
    assert (forgotten.sessions_forgotten, forgotten.messages_deleted, forgotten.complete) == (1, 1, True)
    assert await resolve(client.get_session(owned)) is None
    caller = await resolve(client.get_caller())
    assert caller.tenant and caller.user_id == ""
    assert set(caller.scopes) == {"memory:read", "memory:write", "memory:admin"}

    # MetadataService
    namespace = f"ns-{tag}"
    entry = await resolve(client.save_metadata(namespace, "k1", {"answer": 42}))
    assert to_dict(entry.data) == {"answer": 42}
    assert to_dict((await resolve(client.get_metadata(namespace, "k1"))).data) == {"answer": 42}
    await resolve(client.save_metadata(namespace, "k2", {}))
    assert (await resolve(client.list_metadata(namespace, page_size=1))).next_page_token
    assert [e.key for e in await collect(client.iter_metadata(namespace, page_size=1))] == ["k1", "k2"]
    await resolve(client.save_metadata(f"{namespace}/sub", "k3", {}))
    by_prefix = await collect(client.iter_metadata(namespace_prefix=namespace, page_size=2))
    assert [(e.namespace, e.key) for e in by_prefix] == [(namespace, "k1"), (namespace, "k2"), (f"{namespace}/sub", "k3")]
    assert list((await resolve(client.list_namespaces(namespace))).namespaces) == [namespace, f"{namespace}/sub"]
    assert await collect(client.iter_namespaces(namespace, page_size=1)) == [namespace, f"{namespace}/sub"]
    assert await resolve(client.delete_metadata(namespace, "k1")) is True
    assert await resolve(client.get_metadata(namespace, "k1")) is None

    # EventService (Watch has tests of its own)
    published = await resolve(client.publish_event(session, compress_requested=CompressRequested(requested_by=tag)))
    assert published.seq > 0 and published.compress_requested.requested_by == tag

    # VectorService
    model = f"test:{tag}"
    point = VectorPoint(
        model_id=model, vector=[1.0, 0.0, 0.0, 0.0], session_id=session, message_id=fresh.id,
        timestamp=fresh.timestamp, text="fresh start",
    )  # fmt: skip
    assert len(await resolve(client.upsert_vectors([point]))) == 1
    found = await resolve(
        client.search_memory([1.0, 0.1, 0.0, 0.0], model_id=model, scope=RecallScope.RECALL_SCOPE_SESSION, session_id=session)
    )
    assert [hit.message_id for hit in found.hits] == [fresh.id]
    with pytest.raises(InvalidArgumentError) as bad:
        await resolve(client.search_memory([1.0, 0.0, 0.0, 0.0], model_id=model, neighbor_weight=2.0))
    assert [v.field for v in bad.value.field_violations] == ["neighbor_weight"]
    stats = await resolve(client.get_vector_stats())
    assert {m.model_id: m.count for m in stats.models}[model] == 1
    assert await resolve(client.delete_vectors(model_id=model)) == 1

    # SummaryService
    saved = await resolve(client.save_summary(other, one.seq, two.seq, "asked and answered", metadata={"model": "m"}))
    assert saved.cursor == two.seq
    assert [s.text for s in await collect(client.iter_summaries(other))] == ["asked and answered"]
    assert (await resolve(client.list_summaries(other))).summaries[0].id == saved.summary.id
    assert (await resolve(client.get_summary_cursor(other))).cursor == two.seq
    searched = await resolve(client.search_summaries("asked answered", include_messages=True, keyword_weight=1.0))
    assert [h.summary.id for h in searched.hits] == [saved.summary.id] and [m.id for m in searched.hits[0].messages] == [one.id, two.id]
    context = await resolve(client.assemble_context(other, recent_raw_n=1))
    assert context.summary.text == "asked and answered" and [m.message.id for m in context.messages] == [two.id]

    # EntryService
    scope = f"scope-{tag}"
    kept = (await resolve(client.save_entry(scope, "Prefers green tea", tags=["drink"]))).entry
    hits = (await resolve(client.search_entries(scope, "tea"))).hits
    assert [h.entry.id for h in hits] == [kept.id]
    assert [e.id for e in await collect(client.iter_entries(scope))] == [kept.id]
    assert (await resolve(client.list_entries(scope))).entries[0].id == kept.id
    assert await resolve(client.forget_entry(scope, kept.id)) is True

    # Clears last: ClearAll empties the tenant.
    results = await resolve(client.clear_session(other, [ClearTarget.CLEAR_TARGET_MESSAGES]))
    assert [(r.target, r.outcome) for r in results] == [(ClearTarget.CLEAR_TARGET_MESSAGES, ClearOutcome.CLEAR_OUTCOME_CLEARED)]
    results = await resolve(client.clear_all())
    assert [r.outcome for r in results] == [ClearOutcome.CLEAR_OUTCOME_CLEARED]
    assert await resolve(client.get_history(session)) == []


@pytest.mark.parametrize("flavor", ["async", "sync"])
async def test_every_unary_rpc_has_a_typed_method(private_memoryd: MemorydServer, flavor: str):
    proxy = FaultProxy(private_memoryd.target)
    await proxy.start()
    try:
        tag = f"{flavor}-{uuid.uuid4().hex[:8]}"
        if flavor == "async":
            async with MemoryClient(proxy.target) as client:
                await exercise_every_method(client, tag)
        else:  # blocking calls: off the event loop that runs the proxy
            with SyncMemoryClient(proxy.target) as client:
                await asyncio.to_thread(asyncio.run, exercise_every_method(client, tag))
    finally:
        await proxy.stop()

    assert set(proxy.attempts) == set(UNARY)


def test_the_service_config_classifies_every_rpc_once():
    names = [
        f"/{name['service']}/{name['method']}"
        for method_config in contract_service_config()["methodConfig"]
        for name in method_config["name"]
    ]
    everything = {f"/{s.full_name}/{m.name}" for s in SERVICES for m in s.methods}
    assert sorted(names) == sorted(everything), "each RPC in exactly one method config"
    assert "/memoryd.v1.EventService/Watch" not in RETRIED  # the watch helpers resume it


def test_every_copy_of_the_service_config_is_the_contracts():
    contract = json.loads((ROOT / "proto/memoryd/v1/memoryd_grpc_service_config.json").read_text())
    assert contract_service_config() == contract
    for copy in ("clients/go/memoryd", "clients/typescript/src/gen/memoryd/v1"):
        assert json.loads((ROOT / copy / "memoryd_grpc_service_config.json").read_text()) == contract, copy


def test_docs_list_the_classification_of_every_rpc():
    """docs/CLIENTS.md's table says, per RPC, whether clients retry it: the same as the service config."""
    text = (ROOT / "docs/CLIENTS.md").read_text()
    rows = [line.split("|") for line in text.splitlines() if line.startswith("| `memoryd.v1.")]
    documented = {}
    for row in rows:
        service = row[1].strip().strip("`")
        for name in row[2].replace("`", "").split(","):
            documented[f"/{service}/{name.strip()}"] = row[3].strip().startswith("retried")
    assert set(documented) == {f"/{s.full_name}/{m.name}" for s in SERVICES for m in s.methods}
    assert {path for path, is_retried in documented.items() if is_retried} == RETRIED


@pytest.mark.parametrize("path", sorted(UNARY))
async def test_unavailable_is_retried_only_for_idempotent_rpcs(memoryd: MemorydServer, path: str):
    proxy = FaultProxy(memoryd.target, faults=[Fault(path, grpc.StatusCode.UNAVAILABLE, times=1)])
    await proxy.start()
    method = UNARY[path]
    request = message_factory.GetMessageClass(method.input_type)()  # empty: the proxy fails it anyway
    try:
        async with MemoryClient(proxy.target) as client:
            stub = getattr(client, STUB_ATTRIBUTES[method.containing_service.name])
            try:
                await client.call(getattr(stub, method.name), request)
                outcome = "answered"
            except UnavailableError:
                outcome = "unavailable"
            except Exception:  # the server's answer to an empty request (INVALID_ARGUMENT, ...)
                outcome = "answered"
    finally:
        await proxy.stop()

    if path in RETRIED:
        assert (proxy.attempts[path], outcome) == (2, "answered")
    else:
        assert (proxy.attempts[path], outcome) == (1, "unavailable")
