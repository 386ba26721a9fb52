"""The bad-input corpus over HTTP/JSON: names the contract does not have, generated from the
served descriptors.

For every RPC of every service memoryd serves (server streams included, so an RPC added
later is covered with no change here), a JSON body is built that reaches, and breaks by
name, each place of the request:

- every message the request can hold (nested, repeated and oneof members alike) gets a key
  that names no field;
- every enum field, wherever it sits, gets a name its enum does not have (a real name with
  one letter more, like `CLEAR_TARGET_METADATAS`) and a real name in lower case.

Each must answer 400 invalid_argument (a stream: its end message) with a google.rpc.BadRequest
naming that path (`message.segments[0].zz_not_a_field`, `targets[0]`), and nothing stored may
change. A parser that drops what it does not know would run the rest: ClearAll whose only
target was dropped clears every message, Watch whose only type was dropped streams every type.
The keys on the way are proto names for the unknown-field cases and JSON names (lowerCamelCase)
for the enum cases, so both spellings the server accepts are walked.

Enum numbers are ProtoJSON too: one that no value has must be refused exactly as gRPC refuses
it (the same code, message and details).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor

from memoryd.domain.errors import MAX_LISTED_VIOLATIONS
from tests.http.calls import grpc_error, http_error, methods, path
from tests.security.conftest import CORPUS_LIMITS
from tests.security.harness import Caller, new_token, snapshot, start_app
from tests.security.test_bad_inputs import NS, SCOPE, seed

UNKNOWN_KEY = "zz_not_a_field"
OUT_OF_RANGE_NUMBER = 99  # no enum of the contract has so many values
CONNECT_END_STREAM = 0x02
RPCS = methods(streaming=False) + methods(streaming=True)

Step = tuple[str, bool]  # (JSON key, whether the value is a list: the path takes its [0])


@dataclass(frozen=True)
class Case:
    method: MethodDescriptor
    kind: str
    body: dict
    field: str  # the path the BadRequest must name, in proto names

    @property
    def id(self) -> str:
        return f"{self.method.name}:{self.field}:{self.kind}"


def nest(steps: tuple[Step, ...], value: Any) -> Any:
    for key, listed in reversed(steps):
        value = {key: [value] if listed else value}
    return value


def _field_path(fields: tuple[FieldDescriptor, ...]) -> str:
    return ".".join(f.name + ("[0]" if f.is_repeated else "") for f in fields)


def _is_plain_message(field: FieldDescriptor) -> bool:
    return (
        field.message_type is not None
        and not field.message_type.GetOptions().map_entry
        and not field.message_type.full_name.startswith("google.protobuf.")
    )


def cases() -> Iterator[Case]:
    """Every message of every request gets an unknown key; every enum field two unknown names."""

    def walk(method: MethodDescriptor, message: Descriptor, on_the_way: tuple[FieldDescriptor, ...]) -> Iterator[Case]:
        steps = tuple((f.name, f.is_repeated) for f in on_the_way)
        prefix = _field_path(on_the_way)
        yield Case(method, "unknown-field", nest(steps, {UNKNOWN_KEY: 1}), f"{prefix}.{UNKNOWN_KEY}".lstrip("."))
        for field in message.fields:
            if field.enum_type is not None:
                names = [value.name for value in field.enum_type.values]
                camel_steps = tuple((f.json_name, f.is_repeated) for f in (*on_the_way, field))
                target = _field_path((*on_the_way, field))
                yield Case(method, "unknown-enum-name", nest(camel_steps, names[-1] + "S"), target)
                yield Case(method, "lower-case-enum-name", nest(camel_steps, names[-1].lower()), target)
            elif _is_plain_message(field) and field.message_type not in (f.message_type for f in on_the_way):
                yield from walk(method, field.message_type, (*on_the_way, field))

    for method in RPCS:
        yield from walk(method, method.input_type, ())


def enum_fields() -> Iterator[tuple[MethodDescriptor, tuple[FieldDescriptor, ...]]]:
    """(RPC, the fields from the request down to an enum field) of every enum field of every request."""

    def walk(method, message, on_the_way):
        for field in message.fields:
            if field.enum_type is not None:
                yield method, (*on_the_way, field)
            elif _is_plain_message(field) and field.message_type not in (f.message_type for f in on_the_way):
                yield from walk(method, field.message_type, (*on_the_way, field))

    for method in RPCS:
        yield from walk(method, method.input_type, ())


def test_every_rpc_and_every_enum_field_is_covered():
    generated = list(cases())
    assert {case.method.full_name for case in generated} == {rpc.full_name for rpc in RPCS}
    enum_cases = {(case.method.full_name, case.field) for case in generated if case.kind != "unknown-field"}
    assert enum_cases == {(rpc.full_name, _field_path(fields)) for rpc, fields in enum_fields()}
    assert len(enum_cases) >= 7  # ClearTarget twice, EventType, the recall scope, roles and fusions today
    assert any(case.field.count(".") >= 2 for case in generated)  # nested messages are walked


# -- against a server ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
async def target(tmp_path_factory):
    token = new_token()
    app = await start_app(tmp_path_factory.mktemp("json-inputs"), {"json": token}, limits=CORPUS_LIMITS)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    caller = Caller(channel, token, "json")
    await seed(caller)
    headers = {"authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", headers=headers, timeout=30) as http:
        yield app, caller, http
    await channel.close()
    await app.stop(0)


def _envelope(body: dict) -> bytes:
    data = json.dumps(body).encode()
    return struct.pack(">BI", 0, len(data)) + data


async def call_over_http(http: httpx.AsyncClient, method: MethodDescriptor, body: dict) -> dict:
    """{"ok": first answer} or the Connect error, decoded (tests/http/calls.http_error). A stream
    counts as taken when its first message arrives (Watch opens with a progress)."""
    if not method.server_streaming:
        response = await http.post(path(method), json=body)
        if response.status_code == 200:
            return {"ok": response.json()}
        error = http_error(response.json())
        assert response.status_code == 400 or error["code"] != "invalid_argument", response.text
        return error
    headers = {"content-type": "application/connect+json"}
    async with http.stream("POST", path(method), content=_envelope(body), headers=headers) as response:
        assert response.status_code == 200, response.status_code  # a Connect stream's errors end it
        data = b""
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= 5 and len(data) >= 5 + struct.unpack(">I", data[1:5])[0]:
                break
    flags, length = struct.unpack(">BI", data[:5])
    message = json.loads(data[5 : 5 + length])
    if flags & CONNECT_END_STREAM:
        assert "error" in message, message
        return http_error(message["error"])
    return {"ok": message}


def _violations(answer: dict) -> list[str]:
    return [v["field"] for d in answer.get("details", []) if d["type"] == "google.rpc.BadRequest" for v in d["field_violations"]]


async def test_unknown_names_are_refused_naming_the_field_and_nothing_changes(target, capsys):
    app, caller, http = target
    before = await snapshot(app, caller, namespaces=(NS, NS + "-2"), scopes=(SCOPE,))
    generated = list(cases())
    failures = []
    for case in generated:
        answer = await call_over_http(http, case.method, case.body)
        if "ok" in answer:
            failures.append(f"{case.id}: taken: {answer['ok']}")
        elif answer["code"] != "invalid_argument" or case.field not in _violations(answer):
            failures.append(f"{case.id}: {answer['code']} naming {_violations(answer)}")
        elif await app.store.event_bounds(caller.tenant) != before["events"]:
            failures.append(f"{case.id}: refused, but something was stored")  # every change logs an event
    assert await snapshot(app, caller, namespaces=(NS, NS + "-2"), scopes=(SCOPE,)) == before
    with capsys.disabled():
        print(f"\n{len(generated)} unknown-name bodies over HTTP, {len(RPCS)} RPCs: {len(failures)} failures")
    assert not failures, "\n".join(failures[:MAX_LISTED_VIOLATIONS])


async def test_unknown_enum_numbers_are_refused_as_over_grpc(target):
    app, caller, http = target
    before = await snapshot(app, caller, namespaces=(NS, NS + "-2"), scopes=(SCOPE,))
    for method, fields in enum_fields():
        body = nest(tuple((f.name, f.is_repeated) for f in fields), OUT_OF_RANGE_NUMBER)
        request = json_format.ParseDict(body, message_factory.GetMessageClass(method.input_type)())
        over_http = await call_over_http(http, method, body)
        stub = (caller.channel.unary_stream if method.server_streaming else caller.channel.unary_unary)(
            path(method), request_serializer=lambda m: m.SerializeToString(), response_deserializer=lambda raw: raw
        )
        with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
            call = stub(request, metadata=caller.auth, timeout=15)
            await (call.read() if method.server_streaming else call)
        assert over_grpc.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (method.name, _field_path(fields))
        assert over_http == grpc_error(over_grpc.value), (method.name, _field_path(fields))
    assert await snapshot(app, caller, namespaces=(NS, NS + "-2"), scopes=(SCOPE,)) == before
