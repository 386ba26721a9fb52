"""HTTP/JSON reads ProtoJSON strictly and answers it readably (transport/http/protojson.py).

The reproductions of issue 32 first (each stored something, or deleted everything, before),
then what a malformed body answers (a fixed sentence naming the field, never the parser's
text), then the answers: UTF-8 as is, proto field names, and 415s that say what is accepted.
tests/security/test_json_inputs.py walks every RPC and enum field the same way.
"""

from __future__ import annotations

import json

import pytest
from google.protobuf import message_factory

from memoryd.domain.errors import InvalidArgument
from memoryd.transport.http import protojson
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import event_service_pb2, message_pb2
from tests.http.calls import grpc_call, grpc_error, http_error, method, path
from tests.http.test_watch import envelope, frames
from tests.security.test_json_inputs import enum_fields, nest

SAVE_MESSAGE = method("memoryd.v1.MemoryService.SaveMessage")
SAVE_MESSAGES = method("memoryd.v1.MemoryService.SaveMessages")
GET_HISTORY = method("memoryd.v1.MemoryService.GetHistory")
CLEAR_ALL = method("memoryd.v1.MemoryService.ClearAll")
CLEAR_SESSION = method("memoryd.v1.MemoryService.ClearSession")
RECENT = method("memoryd.v1.MemoryService.GetRecentAcrossSessions")
SEARCH = method("memoryd.v1.VectorService.SearchMemory")
WATCH = "/memoryd.v1.EventService/Watch"
TENANT = "acme"
CLEARED_TENANT = "http1"  # a tenant of its own: ClearAll is tenant-wide


async def _post(server, rpc, body, tenant: str = TENANT):
    return await server.http.post(path(rpc), json=body, headers=server.bearer(tenant))


async def _history(server, session_id: str, tenant: str = TENANT) -> list[str]:
    answer = await grpc_call(server.channel, GET_HISTORY, {"session_id": session_id, "limit": 100}, server.bearer(tenant))
    return [m.content for m in answer.messages]


async def _saved(server, session_id: str, *contents: str, tenant: str = TENANT) -> None:
    body = {"session_id": session_id, "messages": [{"role": "user", "content": c} for c in contents]}
    await grpc_call(server.channel, SAVE_MESSAGES, body, server.bearer(tenant))


def _refusal(response, field: str) -> dict:
    """The Connect error of a 400 invalid_argument whose BadRequest names `field` (and only it)."""
    assert response.status_code == 400, response.text
    error = http_error(response.json())
    assert error["code"] == "invalid_argument"
    (bad_request,) = [d for d in error["details"] if d["type"] == "google.rpc.BadRequest"]
    assert [v["field"] for v in bad_request["field_violations"]] == [field]
    return error


# -- issue 32, as reported ----------------------------------------------------------------------------
async def test_clear_all_with_an_unknown_target_name_leaves_every_message(server, session_id):
    await _saved(server, session_id, "keep me", "and me", tenant=CLEARED_TENANT)
    response = await _post(server, CLEAR_ALL, {"targets": ["CLEAR_TARGET_METADATAS"]}, tenant=CLEARED_TENANT)
    _refusal(response, "targets[0]")
    assert await _history(server, session_id, tenant=CLEARED_TENANT) == ["keep me", "and me"]


async def test_clear_session_with_a_lower_case_target_name_leaves_the_session(server, session_id):
    await _saved(server, session_id, "keep me")
    response = await _post(server, CLEAR_SESSION, {"session_id": session_id, "targets": ["clear_target_messages"]})
    _refusal(response, "targets[0]")
    assert await _history(server, session_id) == ["keep me"]


async def test_a_misspelt_message_field_stores_nothing(server, session_id):
    response = await _post(server, SAVE_MESSAGE, {"session_id": session_id, "message": {"role": "user", "contnet": "hi"}})
    error = _refusal(response, "message.contnet")
    assert error["message"] == "message.contnet: is not a field of memoryd.v1.Message"
    assert await _history(server, session_id) == []


async def test_watch_with_an_unknown_event_type_name_is_refused_before_it_streams(server):
    headers = {"content-type": "application/connect+json", **server.bearer(TENANT)}
    request = envelope({"types": ["EVENT_TYPE_MESSAGES_APPENDEDX"]})
    async with server.http.stream("POST", WATCH, content=request, headers=headers) as response:
        received = [frame async for frame in frames(response)]
    ((flags, end),) = received  # no progress first: the watch never started
    assert flags == 0x02
    error = http_error(end["error"])
    assert error["code"] == "invalid_argument"
    assert [v["field"] for d in error["details"] if d["type"] == "google.rpc.BadRequest" for v in d["field_violations"]] == [
        "types[0]"
    ]


async def test_recent_messages_with_a_misspelt_roles_field_are_refused(server):
    # `roles` is a list of free strings (an unknown role simply matches no message, over gRPC
    # too); what used to fall back to every role was a field the parser dropped.
    _refusal(await _post(server, RECENT, {"limit": 5, "role": ["user"]}), "role")


async def test_an_unknown_recall_roles_name_is_refused(server):
    _refusal(await _post(server, SEARCH, {"query_text": "hi", "recall_roles": "RECALL_ROLES_USERS"}), "recall_roles")


async def test_enum_numbers_are_their_values_and_validated_as_over_grpc(server, session_id):
    await _saved(server, session_id, "goes")
    number = mem.CLEAR_TARGET_MESSAGES
    response = await _post(server, CLEAR_SESSION, {"session_id": session_id, "targets": [number]})
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["target"] == "CLEAR_TARGET_MESSAGES"
    assert await _history(server, session_id) == []

    await _saved(server, session_id, "stays")
    unknown = {"session_id": session_id, "targets": [99]}
    over_http = _refusal(await _post(server, CLEAR_SESSION, unknown), "targets[0]")
    with pytest.raises(Exception) as over_grpc:
        await grpc_call(server.channel, CLEAR_SESSION, unknown, server.bearer(TENANT))
    assert over_http == grpc_error(over_grpc.value)
    assert await _history(server, session_id) == ["stays"]


def test_an_enum_number_parses_as_its_name_in_every_request():
    for rpc, fields in enum_fields():
        request_class = message_factory.GetMessageClass(rpc.input_type)
        value = fields[-1].enum_type.values[-1]
        for spelling in ("name", "json_name"):  # both field names ProtoJSON accepts
            steps = tuple((getattr(f, spelling), f.is_repeated) for f in fields)
            as_name = protojson.parse(json.dumps(nest(steps, value.name)).encode(), request_class)
            as_number = protojson.parse(json.dumps(nest(steps, value.number)).encode(), request_class)
            assert as_number == as_name != request_class(), (rpc.name, fields[-1].full_name)


# -- what a malformed body answers ---------------------------------------------------------------------
PARSER_WORDS = ("Error", "Traceback", "recursion", "NoneType", "Failed to", "Message type", "json")
DEEP = 5000  # far past what Python's json module nests


@pytest.mark.parametrize(
    ("body", "field", "sentence"),
    [
        (b"null", "body", "must be a JSON object"),
        (b"[]", "body", "must be a JSON object"),
        (b'{"session_id": ', "body", "is not valid JSON"),
        (b'{"session_id": "\xff"}', "body", "is not UTF-8 text"),
        (b'{"session_id": "s", "message": {"timestamp": NaN}}', "body", "is not valid JSON"),
        (b'{"x": ' + b"[" * DEEP + b"]" * DEEP + b"}", "body", "nests JSON arrays or objects too deeply"),
        (b'{"session_id": "a", "session_id": "b"}', "session_id", "is given more than once"),
        (b'{"session_id": "a", "sessionId": "b"}', "session_id", "is given twice, as session_id and as sessionId"),
        (b'{"message": "hi"}', "message", "must be a JSON object"),
        (b'{"message": {"segments": {}}}', "message.segments", "must be a JSON array"),
        (b'{"message": {"segments": [null]}}', "message.segments[0]", "must not be null"),
        (b'{"message": {"timestamp": "soon"}}', "message.timestamp",
         "must be a whole number within int64's range (a JSON number or a string of digits)"),
        (b'{"message": {"timestamp": 1e400}}', "message.timestamp",
         "must be a whole number within int64's range (a JSON number or a string of digits)"),
        (b'{"message": {"role": 5}}', "message.role", "must be a string of valid Unicode"),
        (b'{"message": {"role": "\\ud800"}}', "message.role", "must be a string of valid Unicode"),
        (b'{"message": {"metadata": [1]}}', "message.metadata", "must be the JSON form of google.protobuf.Struct"),
        (b'{"message": {"metadata": {"a": ' + b"[" * 200 + b"]" * 200 + b"}}}", "message.metadata",
         "must be the JSON form of google.protobuf.Struct"),
        (b'{"message": {"metadata": {"a": {"b": 1, "b": 2}}}}', "message.metadata",
         "holds a JSON object that gives a key more than once"),
        (b'{"session_attributes": {"labels": {"k": 1}}}', "session_attributes.labels",
         "must be a JSON object of string values, each key once"),
    ],
)
async def test_a_malformed_body_answers_a_fixed_sentence_naming_the_field(server, body, field, sentence):
    headers = {"content-type": "application/json", **server.bearer(TENANT)}
    response = await server.http.post(path(SAVE_MESSAGE), content=body, headers=headers)
    error = _refusal(response, field)
    assert error["message"] == f"{field}: {sentence}"
    assert not any(word in sentence for word in PARSER_WORDS)


def test_both_oneof_members_are_refused_naming_the_oneof():
    with pytest.raises(InvalidArgument) as refused:
        protojson.parse(b'{"compress_requested": {}, "compressProgress": {}}', event_service_pb2.PublishEventRequest)
    assert [(v.field, v.description) for v in refused.value.violations] == [
        ("payload", "must have at most one of its fields set")
    ]


def test_every_violation_is_listed_not_just_the_first():
    with pytest.raises(InvalidArgument) as refused:
        protojson.parse(b'{"sesion_id": "s", "message": {"rol": "user", "kind": 1}}', mem.SaveMessageRequest)
    assert [v.field for v in refused.value.violations] == ["sesion_id", "message.rol", "message.kind"]


# -- the answers --------------------------------------------------------------------------------
async def test_answers_keep_utf8_text_and_use_the_proto_field_names(server, session_id):
    text = "你好，世界 🌏"
    response = await _post(server, SAVE_MESSAGE, {"sessionId": session_id, "message": {"role": "user", "content": text,
                                                                                       "reasoningContent": "想"}})
    assert response.status_code == 200, response.text
    assert text.encode() in response.content and b"\\u" not in response.content
    message = response.json()["message"]
    assert message["content"] == text and message["reasoning_content"] == "想"
    assert set(message) <= {f.name for f in message_pb2.Message.DESCRIPTOR.fields}


async def test_stream_messages_use_the_proto_field_names(server):
    headers = {"content-type": "application/connect+json", **server.bearer(TENANT)}
    async with server.http.stream("POST", WATCH, content=envelope({}), headers=headers) as response:
        flags, first = await anext(frames(response))
    assert flags == 0 and set(first["progress"]) <= {"latest_seq", "head_seq"} and "latest_seq" in first["progress"]


@pytest.mark.parametrize(
    ("rpc_path", "content_type", "accepted"),
    [
        (path(GET_HISTORY), None, "application/json"),
        (path(GET_HISTORY), "text/plain", "application/json"),
        (path(GET_HISTORY), "application/grpc", "application/json"),  # gRPC lives on the gRPC port
        (WATCH, "application/json", "application/connect+json"),
    ],
)
async def test_a_content_type_it_does_not_read_answers_415_naming_those_it_does(server, rpc_path, content_type, accepted):
    headers = server.bearer(TENANT) | ({"content-type": content_type} if content_type else {})
    response = await server.http.post(rpc_path, content=b'{"session_id": "s"}', headers=headers)
    assert response.status_code == 415
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert accepted in body["accepted_content_types"] and accepted in body["message"]


def test_field_paths_use_proto_names_and_indexes():
    with pytest.raises(InvalidArgument) as refused:
        protojson.parse(b'{"messages": [{}, {"toolCalls": [{"nmae": "x"}]}]}', mem.SaveMessagesRequest)
    assert [v.field for v in refused.value.violations] == ["messages[1].tool_calls[0].nmae"]
