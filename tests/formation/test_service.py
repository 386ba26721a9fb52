"""FormationService end to end: a real server (in process, gRPC on a port) with --llm-url at
the scripted chat-completions server; writes return their log position, WaitForFormation
returns once formation processed it, and the formed memory reads back through the contract
(ListFacts with history and paging, GetProfile, AssembleContext.profile, status, settings,
Watch events). Formation off: the RPCs say so."""

from __future__ import annotations

import grpc
import pytest

from memoryd.app import start
from memoryd.config import Config
from memoryd.v1 import (
    event_pb2,
    event_service_pb2,
    event_service_pb2_grpc,
    formation_service_pb2_grpc,
    memory_service_pb2_grpc,
    message_pb2,
    summary_service_pb2_grpc,
)
from memoryd.v1 import formation_service_pb2 as fpb
from memoryd.v1 import memory_service_pb2 as mpb
from memoryd.v1 import summary_service_pb2 as spb
from tests.formation.script import Model
from tests.llm_server import ScriptedLLM, server_error


def config(tmp_path, **values) -> Config:
    return Config(listen="127.0.0.1:0", http_listen="off", data_dir=tmp_path, vectors_enabled=False, **values)


async def save(memory, session, *texts, user="alice"):
    request = mpb.SaveMessagesRequest(
        session_id=session, session_attributes=message_pb2.SessionAttributes(user_id=user)
    )
    for text in texts:
        request.messages.add(role="user", content=text)
    return await memory.SaveMessages(request)


async def test_formation_over_grpc(tmp_path):
    model = Model()
    with ScriptedLLM(model) as llm:
        app = await start(config(tmp_path, llm_url=llm.url, llm_model=llm.model, formation_summary_max_messages=4))
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
                memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
                formation = formation_service_pb2_grpc.FormationServiceStub(channel)
                summaries = summary_service_pb2_grpc.SummaryServiceStub(channel)
                events = event_service_pb2_grpc.EventServiceStub(channel)
                await save(memory, "s1", "my city is Paris", "my food is rice", "hi", "my pet is cat")
                wrote = await save(memory, "s1", "my city is Rome")
                waited = await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=wrote.event_seq, timeout_ms=20_000)
                )
                assert {s.strategy for s in waited.strategies} == {1, 2, 3, 4}  # summary, facts, profile, custom
                assert all(s.position >= wrote.event_seq for s in waited.strategies)

                current = await formation.ListFacts(fpb.ListFactsRequest(user_id="alice"))
                assert sorted(f.text for f in current.facts) == [
                    "user's city is Rome",
                    "user's food is rice",
                    "user's pet is cat",
                ]
                pages, token = [], ""
                while True:
                    page = await formation.ListFacts(
                        fpb.ListFactsRequest(user_id="alice", include_superseded=True, page_size=2, page_token=token)
                    )
                    pages.append(len(page.facts))
                    token = page.next_page_token
                    if not token:
                        break
                    # The token is bound to the request it came from.
                    with pytest.raises(grpc.aio.AioRpcError) as caught:
                        await formation.ListFacts(fpb.ListFactsRequest(user_id="bob", page_token=token))
                    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert sum(pages) == 4 and max(pages) == 2
                paris = [
                    f
                    for f in (
                        await formation.ListFacts(fpb.ListFactsRequest(user_id="alice", include_superseded=True))
                    ).facts
                    if f.valid_to
                ]
                assert [f.text for f in paris] == ["user's city is Paris"] and paris[0].superseded_by
                assert paris[0].sources[0].session_id == "s1" and paris[0].sources[0].seq == 1

                profile = await formation.GetProfile(fpb.GetProfileRequest(user_id="alice"))
                assert "user's city is Rome" in profile.profile.text
                context = await summaries.AssembleContext(spb.AssembleContextRequest(session_id="s1"))
                assert context.profile.text == profile.profile.text and context.summary.to_seq == 4
                assert [m.message.content for m in context.messages] == ["my city is Rome"]

                rome = next(f for f in current.facts if "Rome" in f.text)
                fixed = await formation.UpdateFact(
                    fpb.UpdateFactRequest(user_id="alice", fact_id=rome.id, text="user's city is Roma")
                )
                assert fixed.fact.corrected and fixed.fact.text == "user's city is Roma"
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await formation.UpdateFact(fpb.UpdateFactRequest(user_id="alice", fact_id="nope", text="x"))
                assert caught.value.code() == grpc.StatusCode.NOT_FOUND
                assert (await formation.DeleteFact(fpb.DeleteFactRequest(user_id="alice", fact_id=rome.id))).deleted

                status = await formation.GetFormationStatus(fpb.GetFormationStatusRequest())
                assert status.enabled and status.model == llm.model and status.tokens_left == -1
                by = {s.strategy: s for s in status.strategies}
                assert (
                    by[fpb.FORMATION_STRATEGY_FACTS].llm_calls >= 1
                    and by[fpb.FORMATION_STRATEGY_FACTS].prompt_tokens > 0
                )

                settings = await formation.SetFormationSettings(
                    fpb.SetFormationSettingsRequest(
                        session_id="s2", settings=fpb.FormationSettings(facts_enabled=False)
                    )
                )
                assert not settings.effective.facts_enabled and settings.effective.summary_max_messages == 4
                got = await formation.GetFormationSettings(fpb.GetFormationSettingsRequest(session_id="s2"))
                assert got.stored.HasField("facts_enabled") and not got.stored.HasField("summary_enabled")
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await formation.SetFormationSettings(
                        fpb.SetFormationSettingsRequest(settings=fpb.FormationSettings(summary_max_messages=51))
                    )
                assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT

                # Formation is behind while the model is down: the wait says so, with positions.
                model.faults.extend([server_error()] * 1000)
                wrote = await save(memory, "s1", "my car is red")
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await formation.WaitForFormation(
                        fpb.WaitForFormationRequest(event_seq=wrote.event_seq, timeout_ms=500)
                    )
                assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                info = dict(caught.value.trailing_metadata() or ())
                assert caught.value.details().startswith("memory formation has not processed")
                model.faults.clear()
                await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=wrote.event_seq, timeout_ms=20_000)
                )
                texts = [f.text for f in (await formation.ListFacts(fpb.ListFactsRequest(user_id="alice"))).facts]
                assert "user's car is red" in texts

                watch = events.Watch(
                    event_service_pb2.WatchRequest(
                        after_seq=0,
                        types=[
                            event_pb2.EVENT_TYPE_MEMORY_FORMED,
                            event_pb2.EVENT_TYPE_MEMORY_SUPERSEDED,
                            event_pb2.EVENT_TYPE_MEMORY_REMOVED,
                        ],
                    )
                )
                seen = []
                async for item in watch:
                    if item.HasField("event"):
                        seen.append((item.event.type, item.event.WhichOneof("payload")))
                    if len(seen) >= 3:
                        break
                watch.cancel()
                assert (event_pb2.EVENT_TYPE_MEMORY_FORMED, "memory_formed") in seen
                del info
        finally:
            await app.stop(0)


async def test_formation_off_says_so(tmp_path):
    app = await start(config(tmp_path))
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
            formation = formation_service_pb2_grpc.FormationServiceStub(channel)
            status = await formation.GetFormationStatus(fpb.GetFormationStatusRequest())
            assert not status.enabled and not status.strategies
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await formation.WaitForFormation(fpb.WaitForFormationRequest(event_seq=1))
            assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "FORMATION_OFF" in str(caught.value.debug_error_string()) or "--llm-url" in caught.value.details()
            assert not (await formation.ListFacts(fpb.ListFactsRequest(user_id="alice"))).facts
    finally:
        await app.stop(0)


async def test_the_python_clients_read_formed_memory(tmp_path):
    from memoryd_client import MemoryClient, SyncMemoryClient, message, session_attributes

    with ScriptedLLM(Model()) as llm:
        app = await start(config(tmp_path, llm_url=llm.url, llm_model=llm.model))
        try:
            async with MemoryClient(f"127.0.0.1:{app.port}") as client:
                wrote = await client.save_messages(
                    "s1",
                    [message("user", "my city is Paris"), message("user", "my food is rice")],
                    attributes=session_attributes("alice"),
                )
                await client.wait_for_formation(wrote.event_seq, timeout_ms=20_000)
                facts = [f async for f in client.iter_facts("alice", page_size=1)]
                assert sorted(f.text for f in facts) == ["user's city is Paris", "user's food is rice"]
                fixed = await client.update_fact("alice", facts[0].id, "user's city is Lyon")
                assert fixed.corrected
                assert (await client.get_profile("alice")) is not None
                assert await client.get_profile("nobody") is None
                assert (await client.get_formation_status()).enabled

            def sync_calls(port: int) -> tuple[int, bool]:
                with SyncMemoryClient(f"127.0.0.1:{port}") as sync:
                    listed = sync.list_facts("alice", include_superseded=True).facts
                    return len(listed), sync.delete_fact("alice", listed[0].id)

            import asyncio

            assert await asyncio.to_thread(sync_calls, app.port) == (2, True)
        finally:
            await app.stop(0)


async def test_a_token_bound_to_a_user_reaches_only_that_users_formed_memory(tmp_path):
    from tests.security.harness import new_token

    admin, alice = new_token(), new_token()
    scopes = "memory:read memory:write memory:admin"
    tokens = f"acme: {admin} {scopes}\nacme: {alice} {scopes} user=alice\n"
    with ScriptedLLM(Model()) as llm:
        app = await start(config(tmp_path, llm_url=llm.url, llm_model=llm.model, tokens=tokens))
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
                formation = formation_service_pb2_grpc.FormationServiceStub(channel)
                as_alice = (("authorization", f"Bearer {alice}"),)
                mine = await formation.ListFacts(fpb.ListFactsRequest(user_id="alice"), metadata=as_alice)
                assert list(mine.facts) == []
                for call in (
                    formation.ListFacts(fpb.ListFactsRequest(user_id="bob"), metadata=as_alice),
                    formation.GetProfile(fpb.GetProfileRequest(user_id="bob"), metadata=as_alice),
                    formation.DeleteFact(fpb.DeleteFactRequest(user_id="bob", fact_id="x"), metadata=as_alice),
                    formation.GetFormationStatus(fpb.GetFormationStatusRequest(), metadata=as_alice),
                    formation.SetFormationSettings(fpb.SetFormationSettingsRequest(), metadata=as_alice),
                ):
                    with pytest.raises(grpc.aio.AioRpcError) as caught:
                        await call
                    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
                as_admin = (("authorization", f"Bearer {admin}"),)
                assert (await formation.GetFormationStatus(fpb.GetFormationStatusRequest(), metadata=as_admin)).enabled

                # Formed-memory events are keyed by the user they are about: alice's watch gets
                # her facts' and profile's (and her slices', by session), never bob's.
                memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
                events = event_service_pb2_grpc.EventServiceStub(channel)
                await memory.SaveMessages(_said("b1", "bob", "my city is Oslo", "my city is Rome"), metadata=as_admin)
                await memory.SaveMessages(_said("a1", "alice", "my city is Paris", "my city is Lyon"), metadata=as_admin)
                wrote = await memory.SaveMessages(_said("a2", "alice", "my pet is cat"), metadata=as_alice)
                await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=wrote.event_seq, timeout_ms=20_000), metadata=as_admin
                )
                marker = await events.PublishEvent(
                    event_service_pb2.PublishEventRequest(session_id="a2", compress_requested=event_pb2.CompressRequested()),
                    metadata=as_alice,
                )
                seen = {}
                for token in (alice, admin):
                    watch = events.Watch(
                        event_service_pb2.WatchRequest(after_seq=0), metadata=(("authorization", f"Bearer {token}"),)
                    )
                    changes = []
                    async for item in watch:
                        if item.HasField("event"):
                            if item.event.seq >= marker.event.seq:
                                break
                            kind = item.event.WhichOneof("payload")
                            if kind in ("memory_formed", "memory_superseded", "memory_removed"):
                                change = getattr(item.event, kind)
                                changes.append((kind, change.kind, change.user_id))
                    watch.cancel()
                    seen[token] = changes
                assert {c[2] for c in seen[admin]} == {"alice", "bob"}
                assert seen[alice] == [c for c in seen[admin] if c[2] == "alice"]
                assert {(k, what) for k, what, _ in seen[alice]} >= {
                    ("memory_formed", "fact"), ("memory_superseded", "fact"), ("memory_formed", "profile"),
                }
        finally:
            await app.stop(0)


def _said(session: str, user: str, *texts: str) -> mpb.SaveMessagesRequest:
    request = mpb.SaveMessagesRequest(session_id=session, session_attributes=message_pb2.SessionAttributes(user_id=user))
    for text in texts:
        request.messages.add(role="user", content=text)
    return request


def test_formation_settings_are_checked_at_startup(tmp_path):
    with pytest.raises(ValueError, match="--llm-model"):
        config(tmp_path, llm_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="--llm-api-key-file"):
        config(tmp_path, llm_url="http://127.0.0.1:9/v1", llm_model="m", llm_api_key_file=str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="formation_summary_max_messages"):
        config(tmp_path, formation_summary_max_messages=51)
