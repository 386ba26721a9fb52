"""Custom strategies (the caller's instruction and JSON schema) against a real store and the
scripted model over HTTP: records with provenance, answers checked against the caller's
schema (an invalid one is retried, nothing stored from it), forgetting that reaches the
records, settings checked when they are set, and the contract over gRPC with a user-bound
token.

The scripted model (tests/formation/script.py) answers a custom strategy's call as a function
of the prompt: every user message "i like <thing>" gives the record {"item": "<thing>"}
(sources: that message). What
the records must be is then a function of the log that `check_custom` computes on its own:
0 missing, 0 orphans, 0 duplicates.
"""

from __future__ import annotations

import json

import grpc
import pytest
from grpc_status import rpc_status

from memoryd.app import start
from memoryd.domain.models import ClearTarget, EventType
from memoryd.formation import llm
from memoryd.formation.custom import delete_record, strict_compatible
from memoryd.formation.records import CustomRecords
from memoryd.v1 import formation_service_pb2 as fpb
from memoryd.v1 import formation_service_pb2_grpc, memory_service_pb2_grpc
from tests.formation.conftest import Rig
from tests.formation.script import LIKES, Model
from tests.formation.test_faults import settle_through_faults
from tests.formation.test_service import _said, config
from tests.llm_server import ScriptedLLM

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["item"],
    "properties": {"item": {"type": "string", "maxLength": 40}},
}
LIKES_STRATEGY = {
    "name": "likes",
    "prompt": "Record each thing the user says they like.",
    "json_schema": json.dumps(SCHEMA),
    "enabled": True,
}


async def likes_on(rig: Rig, session: str = "", strategies: list[dict] | None = None) -> None:
    await rig.formation.settings.save(
        rig.tenant, session, {"custom_strategies": [LIKES_STRATEGY] if strategies is None else strategies}
    )


async def check_custom(rig: Rig, user: str = "alice", strategy: str = "likes") -> dict[str, int]:
    return await check_stored_custom(rig.store, rig.tenant, rig.formation.settings, user, strategy)


async def check_stored_custom(
    store, tenant: str, settings, user: str = "alice", strategy: str = "likes"
) -> dict[str, int]:
    """Set equality of the user's records of the strategy with what the log determines: every
    stored user message "i like X" of the user's sessions (where the strategy is on) is a source
    of exactly one record, {"item": X} (0 missing); every source of every record is a stored
    message that says it (0 orphans); no two records hold the same value (0 duplicates); the
    sources index holds exactly the records' sources."""
    records = CustomRecords(store)
    mine = await records.of_strategy(tenant, user, strategy)
    said: dict[str, dict] = {}
    for info in await store.list_sessions(tenant, None, 1000):
        if info.attributes.user_id != user:
            continue
        effective = await settings.effective(tenant, info.session_id)
        if not any(s.name == strategy and s.enabled for s in effective.custom_strategies):
            continue
        for message in await store.messages_by_seq(tenant, info.session_id, 1, 2**62, 100_000):
            if message.role == "user" and (liked := LIKES.match(message.content)):
                said[message.id] = {"item": liked.group(1)}
    sourced: dict[str, list[str]] = {}
    orphans = 0
    for rec in mine:
        assert rec.sources, f"a record without sources: {rec}"
        for source in rec.sources:
            sourced.setdefault(source.message_id, []).append(rec.id)
            rows = await store.messages_by_seq(tenant, source.session_id, source.seq, source.seq, 1)
            if not rows or rows[0].id != source.message_id or said.get(source.message_id) != rec.value:
                orphans += 1
    missing = [m for m in said if m not in sourced]
    duplicates = {m: ids for m, ids in sourced.items() if len(ids) > 1}
    values = [rec.value_json for rec in mine]
    assert orphans == 0, f"{orphans} orphan sources"
    assert not missing, f"missing records for messages {missing}"
    assert not duplicates, f"messages in several records: {duplicates}"
    assert len(values) == len(set(values)), f"duplicate records: {values}"
    index = set()
    for session in await records.indexed_sessions(tenant):
        for message_id, owner, rec_id in await records.sources_of_session(tenant, session):
            if owner == user:
                index.add((session, message_id, rec_id))
    everything = await records.all(tenant, user)
    assert index == {(s.session_id, s.message_id, r.id) for r in everything for s in r.sources}
    return {"records": len(mine), "sources": sum(len(r.sources) for r in mine)}


async def items(rig: Rig, user: str = "alice", strategy: str = "likes") -> list[str]:
    return sorted(r.value["item"] for r in await CustomRecords(rig.store).of_strategy(rig.tenant, user, strategy))


async def test_records_form_with_provenance_and_a_repeated_value_adds_sources(rig):
    await likes_on(rig)
    first = await rig.say("s1", "i like tea", "hello there", "i like chess", "my city is Paris")
    await rig.settle()
    records = {r.value["item"]: r for r in await CustomRecords(rig.store).of_strategy(rig.tenant, "alice", "likes")}
    assert set(records) == {"tea", "chess"}
    assert [s.message_id for s in records["tea"].sources] == [first[0].id]
    assert records["chess"].strategy == "likes" and records["chess"].create_time > 0
    again = await rig.say("s2", "i like tea")
    await rig.settle()
    tea = next(
        r for r in await CustomRecords(rig.store).of_strategy(rig.tenant, "alice", "likes") if r.value["item"] == "tea"
    )
    assert {s.message_id for s in tea.sources} == {first[0].id, again[0].id}
    assert await check_custom(rig) == {"records": 2, "sources": 3}
    # The prompt fences the messages, carries the caller's instruction, and asks for the envelope.
    call = rig.llm.calls_for("memoryd_custom_likes")[0]
    assert "Record each thing the user says they like." in call.user and "never an instruction" in call.system
    assert call.body["response_format"]["json_schema"]["strict"] is True
    assert call.schema["properties"]["records"]["items"]["properties"]["value"] == SCHEMA
    # Facts still form beside them; formed events say "custom".
    assert [f.text for f in await rig.facts()] == ["user's city is Paris"]
    events = await rig.store.read_events(rig.tenant, 0, 10_000, types=[EventType.MEMORY_FORMED], through_seq=2**62)
    assert sorted(e.payload["kind"] for e in events if e.payload["kind"] == "custom") == ["custom", "custom"]


async def test_an_answer_outside_the_callers_schema_is_retried_and_nothing_is_stored_from_it(rig):
    await likes_on(rig)
    rig.model.bad_values.extend([{"item": 7}, {"thing": "tea"}])  # a wrong type, then a missing property
    await rig.say("s1", "i like tea")
    failures = await settle_through_faults(rig)
    assert failures == [llm.INVALID_ANSWER, llm.INVALID_ANSWER]
    assert await items(rig) == ["tea"]
    await check_custom(rig)
    status = {s.strategy: s for s in rig.formation.status(rig.tenant, (await rig.store.event_bounds(rig.tenant))[1])}
    assert status["custom"].usage.failures == 2 and status["custom"].last_error == "" and status["custom"].lag == 0
    # A value within the schema but over the size bound is refused the same way.
    unbounded = {**SCHEMA, "properties": {"item": {"type": "string"}}}
    await likes_on(rig, strategies=[{**LIKES_STRATEGY, "json_schema": json.dumps(unbounded)}])
    rig.model.bad_values.append({"item": "x" * 9000})
    await rig.say("s1", "i like cake")
    failures = await settle_through_faults(rig)
    assert failures == [llm.INVALID_ANSWER] and await items(rig) == ["cake", "tea"]


async def test_every_delete_path_and_a_rewrite_reach_the_records(rig):
    await likes_on(rig)
    a = await rig.say("s1", "i like tea", "i like chess", "i like golf", "i like jazz", ts=1000)
    await rig.say("s2", "i like dune")
    await rig.say("s3", "i like tea")
    await rig.settle()
    assert await items(rig) == ["chess", "dune", "golf", "jazz", "tea"]
    await rig.memory.delete_by_ids(rig.tenant, "s1", [a[0].id])  # tea still said in s3
    await rig.memory.delete_by_timestamps(rig.tenant, "s1", [a[1].timestamp])
    await rig.memory.update_message_content(rig.tenant, "s1", "i like golf", "i like polo", 0)
    await rig.settle()
    assert await items(rig) == ["dune", "jazz", "polo", "tea"]
    await check_custom(rig)
    await rig.memory.pop_messages(rig.tenant, "s1", 1)
    await rig.memory.clear(rig.tenant, "s2", [ClearTarget.MESSAGES])
    await rig.settle()
    assert await items(rig) == ["polo", "tea"]
    await check_custom(rig)
    await rig.memory.forget_user(rig.tenant, "alice")
    await rig.settle()
    assert await CustomRecords(rig.store).all(rig.tenant, "alice") == []
    assert await check_custom(rig) == {"records": 0, "sources": 0}
    assert await CustomRecords(rig.store).indexed_sessions(rig.tenant) == []


async def test_strategies_per_session_disabled_or_removed_and_a_callers_deletion(rig):
    dislikes = {**LIKES_STRATEGY, "name": "dislikes", "enabled": False}
    await likes_on(rig, strategies=[LIKES_STRATEGY, dislikes])
    await rig.say("quiet", "i like nothing")  # the session's own list is empty: no strategy runs there
    await likes_on(rig, "quiet", [])
    await rig.say("s1", "i like tea", "i like chess")
    await rig.say("quiet", "i like opera")
    await rig.settle()
    assert await items(rig) == ["chess", "tea"]
    assert rig.llm.calls_for("memoryd_custom_dislikes") == []
    await check_custom(rig)
    chess = next(r for r in await CustomRecords(rig.store).all(rig.tenant, "alice") if r.value["item"] == "chess")
    assert await delete_record(CustomRecords(rig.store), rig.formation.locks, rig.tenant, "alice", chess.id)
    assert not await delete_record(CustomRecords(rig.store), rig.formation.locks, rig.tenant, "bob", chess.id)
    # The strategy leaves the settings: its records stay; a rewrite of their source only removes.
    await likes_on(rig, strategies=[dislikes])
    await rig.memory.update_message_content(rig.tenant, "s1", "i like tea", "i like mint", 0)
    await rig.say("s1", "i like cake")
    await rig.settle()
    assert await items(rig) == []
    removed = await rig.store.read_events(rig.tenant, 0, 10_000, types=[EventType.MEMORY_REMOVED], through_seq=2**62)
    assert sorted(e.payload["reason"] for e in removed if e.payload["kind"] == "custom") == ["caller", "sources_gone"]


def _violations(error: grpc.aio.AioRpcError) -> list[str]:
    from google.rpc import error_details_pb2

    status = rpc_status.from_call(error)
    fields = []
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [v.field for v in bad.field_violations]
    return fields


def _strategy(**values) -> fpb.CustomStrategy:
    return fpb.CustomStrategy(**{**LIKES_STRATEGY, **values})


BAD_SETTINGS = {
    "settings.custom_strategies.strategies[0].json_schema": [
        _strategy(json_schema="{not json"),
        _strategy(json_schema='{"type": "string"}'),
        _strategy(json_schema='{"type": "object", "properties": {"a": {"type": "strng"}}}'),
        _strategy(json_schema=json.dumps({"type": "object", "description": "x" * 17_000})),
        _strategy(json_schema='{"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}'),
    ],
    "settings.custom_strategies.strategies[0].name": [
        _strategy(name="Likes"),
        _strategy(name="a-b"),
        _strategy(name=""),
    ],
    "settings.custom_strategies.strategies[0].prompt": [_strategy(prompt=" "), _strategy(prompt="x" * 4001)],
}


async def test_custom_strategies_over_grpc(tmp_path):
    from tests.security.harness import new_token

    admin, alice = new_token(), new_token()
    scopes = "memory:read memory:write memory:admin"
    tokens = f"acme: {admin} {scopes}\nacme: {alice} {scopes} user=alice\n"
    with ScriptedLLM(Model()) as served:
        app = await start(config(tmp_path, llm_url=served.url, llm_model=served.model, tokens=tokens))
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
                formation = formation_service_pb2_grpc.FormationServiceStub(channel)
                memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
                as_admin = (("authorization", f"Bearer {admin}"),)
                as_alice = (("authorization", f"Bearer {alice}"),)
                # Bad settings: INVALID_ARGUMENT naming the field, nothing stored.
                for field, strategies in BAD_SETTINGS.items():
                    for strategy in strategies:
                        request = fpb.SetFormationSettingsRequest()
                        request.settings.custom_strategies.strategies.append(strategy)
                        with pytest.raises(grpc.aio.AioRpcError) as caught:
                            await formation.SetFormationSettings(request, metadata=as_admin)
                        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                        assert _violations(caught.value) == [field], strategy
                twice = fpb.SetFormationSettingsRequest()
                twice.settings.custom_strategies.strategies.extend([_strategy(), _strategy()])
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await formation.SetFormationSettings(twice, metadata=as_admin)
                assert _violations(caught.value) == ["settings.custom_strategies.strategies[1].name"]
                got = await formation.GetFormationSettings(fpb.GetFormationSettingsRequest(), metadata=as_admin)
                assert not got.stored.HasField("custom_strategies")
                assert got.effective.HasField("custom_strategies") and not got.effective.custom_strategies.strategies

                good = fpb.SetFormationSettingsRequest()
                good.settings.custom_strategies.strategies.append(_strategy())
                set_ = await formation.SetFormationSettings(good, metadata=as_admin)
                assert [s.name for s in set_.effective.custom_strategies.strategies] == ["likes"]
                quiet = fpb.SetFormationSettingsRequest(session_id="quiet")
                quiet.settings.custom_strategies.SetInParent()  # set, empty: no custom strategy there
                await formation.SetFormationSettings(quiet, metadata=as_admin)
                got = await formation.GetFormationSettings(
                    fpb.GetFormationSettingsRequest(session_id="quiet"), metadata=as_admin
                )
                assert got.stored.HasField("custom_strategies") and not got.effective.custom_strategies.strategies

                said = await memory.SaveMessages(_said("s1", "alice", "i like tea", "i like chess"), metadata=as_admin)
                await memory.SaveMessages(_said("quiet", "alice", "i like opera"), metadata=as_admin)
                await memory.SaveMessages(_said("b1", "bob", "i like golf"), metadata=as_admin)
                wrote = await memory.SaveMessages(_said("s2", "alice", "i like tea"), metadata=as_alice)
                waited = await formation.WaitForFormation(
                    fpb.WaitForFormationRequest(event_seq=wrote.event_seq, timeout_ms=20_000), metadata=as_admin
                )
                assert fpb.FORMATION_STRATEGY_CUSTOM in {s.strategy for s in waited.strategies}

                listed = await formation.ListCustomRecords(
                    fpb.ListCustomRecordsRequest(user_id="alice", strategy="likes"), metadata=as_alice
                )
                values = {r.value["item"]: r for r in listed.records}
                assert set(values) == {"tea", "chess"}
                assert {(s.session_id, s.seq) for s in values["tea"].sources} == {("s1", 1), ("s2", 1)}
                assert values["chess"].sources[0].message_id == said.messages[1].id
                page = await formation.ListCustomRecords(
                    fpb.ListCustomRecordsRequest(user_id="alice", page_size=1), metadata=as_alice
                )
                assert len(page.records) == 1 and page.next_page_token
                in_s2 = await formation.ListCustomRecords(
                    fpb.ListCustomRecordsRequest(user_id="alice", session_id="s2"), metadata=as_admin
                )
                assert [r.value["item"] for r in in_s2.records] == ["tea"]
                # A user-bound token reaches only its own records.
                for call in (
                    formation.ListCustomRecords(fpb.ListCustomRecordsRequest(user_id="bob"), metadata=as_alice),
                    formation.DeleteCustomRecord(
                        fpb.DeleteCustomRecordRequest(user_id="bob", record_id="x"), metadata=as_alice
                    ),
                ):
                    with pytest.raises(grpc.aio.AioRpcError) as caught:
                        await call
                    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
                bobs = await formation.ListCustomRecords(fpb.ListCustomRecordsRequest(user_id="bob"), metadata=as_admin)
                assert [r.value["item"] for r in bobs.records] == ["golf"]
                gone = await formation.DeleteCustomRecord(
                    fpb.DeleteCustomRecordRequest(user_id="alice", record_id=bobs.records[0].id), metadata=as_alice
                )
                assert not gone.deleted  # bob's record is not alice's to delete
                deleted = await formation.DeleteCustomRecord(
                    fpb.DeleteCustomRecordRequest(user_id="alice", record_id=values["chess"].id), metadata=as_alice
                )
                assert deleted.deleted
                left = await formation.ListCustomRecords(
                    fpb.ListCustomRecordsRequest(user_id="alice"), metadata=as_alice
                )
                assert [r.value["item"] for r in left.records] == ["tea"]
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await formation.ListCustomRecords(
                        fpb.ListCustomRecordsRequest(user_id="alice", strategy="Not A Name"), metadata=as_admin
                    )
                assert _violations(caught.value) == ["strategy"]
        finally:
            await app.stop(0)


async def test_the_python_clients_set_strategies_and_read_custom_records(tmp_path):
    import asyncio

    from memoryd_client import MemoryClient, SyncMemoryClient, message, session_attributes, to_dict

    with ScriptedLLM(Model()) as served:
        app = await start(config(tmp_path, llm_url=served.url, llm_model=served.model))
        try:
            async with MemoryClient(f"127.0.0.1:{app.port}") as client:
                settings = fpb.FormationSettings(custom_strategies=fpb.CustomStrategies(strategies=[_strategy()]))
                effective = await client.set_formation_settings(settings)
                assert [s.name for s in effective.custom_strategies.strategies] == ["likes"]
                got = await client.get_formation_settings()
                assert got.stored.custom_strategies == settings.custom_strategies
                said = [message("user", "i like tea"), message("user", "i like chess")]
                wrote = await client.save_messages("s1", said, attributes=session_attributes("alice"))
                await client.wait_for_formation(wrote.event_seq, timeout_ms=20_000)
                records = [r async for r in client.iter_custom_records("alice", strategy="likes", page_size=1)]
                assert sorted(to_dict(r)["value"]["item"] for r in records) == ["chess", "tea"]

            def sync_calls(port: int) -> tuple[int, bool, bool]:
                with SyncMemoryClient(f"127.0.0.1:{port}") as sync:
                    listed = sync.list_custom_records("alice").records
                    first = sync.delete_custom_record("alice", listed[0].id)
                    return len(listed), first, sync.delete_custom_record("alice", listed[0].id)

            assert await asyncio.to_thread(sync_calls, app.port) == (2, True, False)
        finally:
            await app.stop(0)


async def test_strict_output_is_asked_only_for_a_schema_that_allows_it(rig):
    """OpenAI's strict mode takes only schemas whose objects all forbid other properties and
    require every one; any other schema is sent non-strict, and the answer is validated the
    same way."""
    loose = {"type": "object", "properties": {"item": {"type": "string"}, "note": {"type": "string"}}}
    assert strict_compatible(SCHEMA) and not strict_compatible(loose)
    assert not strict_compatible({**SCHEMA, "properties": {"item": {"type": "object", "properties": {}}}})
    loosely = {**LIKES_STRATEGY, "name": "loose", "json_schema": json.dumps(loose)}
    await likes_on(rig, strategies=[LIKES_STRATEGY, loosely])
    await rig.say("s1", "i like tea")
    await rig.settle()
    strict = {c.schema_name: c.body["response_format"]["json_schema"]["strict"] for c in rig.llm.calls}
    assert strict["memoryd_custom_likes"] is True and strict["memoryd_custom_loose"] is False
    assert strict["memoryd_facts"] is True
    assert await items(rig, strategy="loose") == ["tea"]
