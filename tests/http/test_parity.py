"""Every unary RPC answers the same over HTTP/JSON (Connect) as over gRPC.

The list of RPCs comes from the service descriptors: a new RPC without a case here fails
test_every_unary_rpc_has_a_case. Each case runs its setup over gRPC in two fresh tenants,
then calls the RPC over gRPC in one and over HTTP in the other, and compares the answers:
the HTTP body is the ProtoJSON of the gRPC response (proto field names), up to the ids the
server generates, and both bodies match the served OpenAPI's schemas.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from tests.http.calls import (
    grpc_call,
    grpc_error,
    http_error,
    method,
    methods,
    openapi_errors,
    openapi_describes,
    path,
    to_json,
)
from tests.http.conftest import CASE_TENANTS

import grpc
from tests.vectors.index_state import drained

S = "parity"
MODEL = "test:m4"
SAVE_MESSAGES = "memoryd.v1.MemoryService.SaveMessages"
SEED = (
    SAVE_MESSAGES,
    {
        "session_id": S,
        "messages": [
            {"role": "user", "content": "hello there", "timestamp": "1000"},
            {"role": "assistant", "content": "general kenobi", "timestamp": "2000"},
            {"role": "user", "content": "bye now", "timestamp": "3000", "kind": "note"},
        ],
    },
)
VECTORS = ("memoryd.v1.VectorService.UpsertVectors", lambda setup: {"points": [_point(setup, 0, [1, 0, 0, 0]), _point(setup, 1, [0, 1, 0, 0])]})
METADATA = ("memoryd.v1.MetadataService.SaveMetadata", {"namespace": "app", "key": "k", "data": {"theme": "dark", "size": 3}})
SUMMARY = ("memoryd.v1.SummaryService.SaveSummary", {"session_id": S, "from_seq": "1", "to_seq": "2", "text": "they greeted"})
OWNER = ("memoryd.v1.MemoryService.UpdateSession", {"session_id": S, "attributes": {"user_id": "ann", "labels": {"plan": "pro"}}})
ENTRY = ("memoryd.v1.EntryService.SaveEntry", {"scope": "u:1", "text": "likes green tea", "tags": ["drink"]})
# Memory formation with the scripted model (tests/formation/script.py) behind --llm-url.
FACT_SEED = (
    SAVE_MESSAGES,
    {"session_id": "told", "session_attributes": {"user_id": "ann"},
     "messages": [{"role": "user", "content": "my city is Paris", "timestamp": "1000"}]},
)
FORMED = ("memoryd.v1.FormationService.WaitForFormation", lambda setup: {"event_seq": setup[0]["event_seq"], "timeout_ms": "20000"})
FACTS = ("memoryd.v1.FormationService.ListFacts", {"user_id": "ann"})
FORMATION_SETTINGS = ("memoryd.v1.FormationService.SetFormationSettings", {"settings": {"summary_max_messages": 10}})
# A custom strategy (the scripted model: "i like <thing>" gives {"item": "<thing>"}) and what it formed.
LIKES = {"type": "object", "additionalProperties": False, "required": ["item"], "properties": {"item": {"type": "string"}}}
CUSTOM_SETTINGS = ("memoryd.v1.FormationService.SetFormationSettings", {"settings": {"custom_strategies": {"strategies": [
    {"name": "likes", "prompt": "What the user likes.", "json_schema": json.dumps(LIKES), "enabled": True}]}}})
CUSTOM_SEED = (
    SAVE_MESSAGES,
    {"session_id": "told", "session_attributes": {"user_id": "ann"},
     "messages": [{"role": "user", "content": "i like tea", "timestamp": "1000"}]},
)
CUSTOM_FORMED = ("memoryd.v1.FormationService.WaitForFormation", lambda setup: {"event_seq": setup[1]["event_seq"], "timeout_ms": "20000"})
CUSTOM_RECORDS = ("memoryd.v1.FormationService.ListCustomRecords", {"user_id": "ann"})


def _point(setup: list[dict], index: int, vector: list[float]) -> dict:
    message = setup[0]["messages"][index]
    return {"model_id": MODEL, "vector": vector, "session_id": S, "message_id": message["id"],
            "timestamp": message["timestamp"], "role": message["role"], "text": message["content"]}


Body = dict | Callable[[list[dict]], dict]


@dataclass
class Case:
    body: Body
    setup: list[tuple[str, Body]] = field(default_factory=lambda: [SEED])


CASES: dict[str, Case] = {
    "memoryd.v1.MemoryService.SaveMessage": Case(
        {"session_id": S, "message": {"role": "user", "content": "one more", "timestamp": "4000"}, "idempotency_key": "k1"}
    ),
    "memoryd.v1.MemoryService.SaveMessages": Case(
        {"session_id": S, "messages": [{"role": "user", "content": "a", "timestamp": "5000"},
                                       {"role": "tool", "content": "b", "timestamp": "6000", "tool_call_id": "c1"}]}
    ),
    "memoryd.v1.MemoryService.GetHistory": Case({"session_id": S, "limit": 2}),
    "memoryd.v1.MemoryService.GetFullHistory": Case({"session_id": S, "page_size": 2}),
    "memoryd.v1.MemoryService.ListMessagesInRange": Case({"session_id": S, "from_ts": "500", "to_ts": "3500", "roles": ["user"]}),
    "memoryd.v1.MemoryService.GetRecentAcrossSessions": Case({"limit": 5, "exclude_kinds": ["note"]}),
    "memoryd.v1.MemoryService.TrimHistory": Case({"session_id": S, "keep_recent": 1}),
    "memoryd.v1.MemoryService.ReplaceHistory": Case({"session_id": S, "messages": [{"role": "user", "content": "fresh", "timestamp": "7000"}]}),
    "memoryd.v1.MemoryService.UpdateMessageContent": Case({"session_id": S, "old_text": "kenobi", "new_text": "grievous", "recent_limit": 10}),
    "memoryd.v1.MemoryService.DeleteMessagesByTimestamps": Case({"session_id": S, "timestamps": ["1000", "3000"]}),
    "memoryd.v1.MemoryService.DeleteMessages": Case(lambda setup: {"session_id": S, "ids": [setup[0]["messages"][1]["id"]]}),
    "memoryd.v1.MemoryService.ClearSession": Case({"session_id": S, "targets": ["CLEAR_TARGET_MESSAGES", "CLEAR_TARGET_METADATA"]}),
    "memoryd.v1.MemoryService.ClearAll": Case({"targets": ["CLEAR_TARGET_MESSAGES"]}),
    "memoryd.v1.MemoryService.ListSessions": Case({"page_size": 10}),
    "memoryd.v1.MemoryService.PopMessages": Case({"session_id": S, "n": 2}),
    "memoryd.v1.MemoryService.GetSession": Case({"session_id": S}, setup=[SEED, OWNER]),
    "memoryd.v1.MemoryService.UpdateSession": Case(
        {"session_id": S, "attributes": {"agent_id": "bot", "labels": {"lang": "en"}}, "remove_labels": ["plan"]},
        setup=[SEED, OWNER],
    ),
    "memoryd.v1.MemoryService.ForgetUser": Case({"user_id": "ann"}, setup=[SEED, OWNER]),
    "memoryd.v1.MemoryService.GetCaller": Case({}, setup=[]),
    "memoryd.v1.MemoryService.GetMemoryStats": Case({}, setup=[SEED, OWNER]),
    "memoryd.v1.MetadataService.SaveMetadata": Case(METADATA[1], setup=[]),
    "memoryd.v1.MetadataService.GetMetadata": Case({"namespace": "app", "key": "k"}, setup=[METADATA]),
    "memoryd.v1.MetadataService.ListMetadata": Case({"namespace": "app"}, setup=[METADATA]),
    "memoryd.v1.MetadataService.DeleteMetadata": Case({"namespace": "app", "key": "k"}, setup=[METADATA]),
    "memoryd.v1.MetadataService.ListNamespaces": Case({"prefix": "a"}, setup=[METADATA]),
    "memoryd.v1.EventService.PublishEvent": Case({"session_id": S, "compress_requested": {"requested_by": "tester", "reason": "long"}}),
    "memoryd.v1.VectorService.UpsertVectors": Case(VECTORS[1]),
    "memoryd.v1.VectorService.SearchMemory": Case(
        {"query_vector": [1, 0.1, 0, 0], "model_id": MODEL, "top_k": 2, "session_id": S}, setup=[SEED, VECTORS]
    ),
    "memoryd.v1.VectorService.DeleteVectors": Case({"session": {"session_id": S}}, setup=[SEED, VECTORS]),
    "memoryd.v1.VectorService.GetVectorStats": Case({}, setup=[SEED, VECTORS]),
    "memoryd.v1.SummaryService.SaveSummary": Case(SUMMARY[1]),
    "memoryd.v1.SummaryService.ListSummaries": Case({"session_id": S}, setup=[SEED, SUMMARY]),
    "memoryd.v1.SummaryService.GetSummaryCursor": Case({"session_id": S}, setup=[SEED, SUMMARY]),
    "memoryd.v1.SummaryService.SearchSummaries": Case(
        {"query_text": "greeted", "top_k": 3, "scope": "RECALL_SCOPE_SESSION", "session_id": S, "include_messages": True},
        setup=[SEED, SUMMARY],
    ),
    "memoryd.v1.SummaryService.AssembleContext": Case({"session_id": S, "budget_chars": 1000, "recent_raw_n": 2}, setup=[SEED, SUMMARY]),
    "memoryd.v1.EntryService.SaveEntry": Case(ENTRY[1], setup=[]),
    "memoryd.v1.EntryService.SearchEntries": Case({"scope": "u:1", "query": "tea", "limit": 5}, setup=[ENTRY]),
    "memoryd.v1.EntryService.ForgetEntry": Case(lambda setup: {"scope": "u:1", "entry_id": setup[0]["entry"]["id"]}, setup=[ENTRY]),
    "memoryd.v1.EntryService.ListEntries": Case({"scope": "u:1"}, setup=[ENTRY]),
    "memoryd.v1.FormationService.ListFacts": Case({"user_id": "ann", "include_superseded": True}, setup=[FACT_SEED, FORMED]),
    "memoryd.v1.FormationService.GetProfile": Case({"user_id": "ann"}, setup=[FACT_SEED, FORMED]),
    "memoryd.v1.FormationService.UpdateFact": Case(
        lambda setup: {"user_id": "ann", "fact_id": setup[2]["facts"][0]["id"], "text": "user's city is Lyon"},
        setup=[FACT_SEED, FORMED, FACTS],
    ),
    "memoryd.v1.FormationService.DeleteFact": Case(
        lambda setup: {"user_id": "ann", "fact_id": setup[2]["facts"][0]["id"]}, setup=[FACT_SEED, FORMED, FACTS]
    ),
    "memoryd.v1.FormationService.WaitForFormation": Case(FORMED[1], setup=[FACT_SEED]),
    "memoryd.v1.FormationService.GetFormationStatus": Case({}, setup=[FACT_SEED, FORMED]),
    "memoryd.v1.FormationService.GetFormationSettings": Case({"session_id": "told"}, setup=[FORMATION_SETTINGS]),
    "memoryd.v1.FormationService.SetFormationSettings": Case(FORMATION_SETTINGS[1], setup=[]),
    "memoryd.v1.FormationService.ListCustomRecords": Case(
        {"user_id": "ann", "strategy": "likes"}, setup=[CUSTOM_SETTINGS, CUSTOM_SEED, CUSTOM_FORMED]
    ),
    "memoryd.v1.FormationService.DeleteCustomRecord": Case(
        lambda setup: {"user_id": "ann", "record_id": setup[3]["records"][0]["id"]},
        setup=[CUSTOM_SETTINGS, CUSTOM_SEED, CUSTOM_FORMED, CUSTOM_RECORDS],
    ),
}

# Values the server generates per call (uuids, its clock); equal in shape, not in value.
GENERATED = {"id", "ids", "message_id", "point_id", "point_ids", "create_time", "update_time", "last_activity", "entry_id", "time"}
# Formation's log positions when a wait ended: where each consumer stood then (timing).
GENERATED |= {"position", "latest", "lag", "fact_ids"}
UNARY = sorted(m.full_name for m in methods(streaming=False))
_tenants = itertools.count()


def _normalize(value, tenant: str):
    if isinstance(value, dict):
        normal = {k: _normalize_field(k, v, tenant) for k, v in value.items()}
        if "latest" in value:  # a strategy's status: a lag of 0 (timing) is left out of the JSON
            normal.setdefault("lag", "<generated>")
        return normal
    if isinstance(value, list):
        return [_normalize(v, tenant) for v in value]
    return "<tenant>" if value == tenant else value


def _normalize_field(key: str, value, tenant: str):
    if key in GENERATED:
        return "<generated>"
    if key == "next_page_token":
        # position.tag: the tag authenticates the tenant too, so twin tenants' tags differ.
        return value.partition(".")[0]
    return _normalize(value, tenant)


def _body(body: Body, setup: list[dict]) -> dict:
    return body(setup) if callable(body) else body


async def _setup(server, tenant: str, steps) -> list[dict]:
    done: list[dict] = []
    for name, body in steps:
        done.append(to_json(await grpc_call(server.channel, method(name), _body(body, done), server.bearer(tenant))))
    await drained(server.app.vectors)  # the saved messages' keyword points are in place
    return done


def test_every_unary_rpc_has_a_case():
    assert sorted(CASES) == UNARY
    assert len(CASES) + 1 < CASE_TENANTS  # a tenant pair per case, one more for the empty-request sweep


@pytest.mark.parametrize("name", UNARY)
async def test_unary_rpc_answers_the_same_over_http(server, name):
    case, rpc = CASES[name], method(name)
    index = next(_tenants)
    grpc_tenant, http_tenant = f"grpc{index}", f"http{index}"
    grpc_setup = await _setup(server, grpc_tenant, case.setup)
    http_setup = await _setup(server, http_tenant, case.setup)

    over_grpc = to_json(await grpc_call(server.channel, rpc, _body(case.body, grpc_setup), server.bearer(grpc_tenant)))
    response = await server.http.post(path(rpc), json=_body(case.body, http_setup), headers=server.bearer(http_tenant))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert _normalize(response.json(), http_tenant) == _normalize(over_grpc, grpc_tenant)
    # the served OpenAPI describes both the request and the answer, field names included
    for message, body in ((rpc.input_type, _body(case.body, http_setup)), (rpc.output_type, response.json())):
        if openapi_describes(message):
            assert openapi_errors(message.full_name, body) == [], message.full_name


async def test_every_unary_rpc_fails_the_same_without_a_token(server):
    for rpc in methods(streaming=False):
        with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
            await grpc_call(server.channel, rpc, {})
        response = await server.http.post(path(rpc), json={})
        assert response.status_code == 401, rpc.full_name
        assert http_error(response.json()) == grpc_error(over_grpc.value), rpc.full_name


async def test_every_unary_rpc_answers_an_empty_request_the_same(server):
    """Mostly INVALID_ARGUMENT naming the required fields; the outcome and details must match."""
    index = CASE_TENANTS - 1
    for rpc in methods(streaming=False):
        try:
            over_grpc = {"ok": to_json(await grpc_call(server.channel, rpc, {}, server.bearer(f"grpc{index}")))}
        except grpc.aio.AioRpcError as error:
            over_grpc = grpc_error(error)
        response = await server.http.post(path(rpc), json={}, headers=server.bearer(f"http{index}"))
        over_http = {"ok": response.json()} if response.status_code == 200 else http_error(response.json())
        assert _normalize(over_http, f"http{index}") == _normalize(over_grpc, f"grpc{index}"), rpc.full_name
