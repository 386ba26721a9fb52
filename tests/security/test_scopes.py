"""Scopes: every RPC the server serves has one (the contract's (memoryd.v1.access) option, read
from the descriptors, so an RPC added later is covered or stops the server), docs/SECURITY.md
shows that table, static tokens carry scopes (every scope when a file names none), and a call
outside a token's scopes answers PERMISSION_DENIED naming the scope, over gRPC and HTTP."""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import httpx
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.rpc import error_details_pb2

from memoryd.v1 import access_pb2
from memoryd.app import SERVICES, start
from memoryd.config import Config
from memoryd.transport.access import UnclassifiedMethod, access_table, markdown_table
from memoryd.transport.principals import ALL_SCOPES
from memoryd.transport.tokens import TokenConfigError, load_tokens, parse_tokens
from tests.http.calls import path
from tests.security.harness import new_token, rich_status

ROOT = Path(__file__).resolve().parents[2]
TABLE = access_table(service.descriptor for service in SERVICES)
ONLY = {scope: new_token() for scope in sorted(ALL_SCOPES)}  # a token with just that scope


def test_every_served_rpc_has_one_scope_and_a_user_access():
    served = {method.full_name for service in SERVICES for method in service.descriptor.methods}
    assert set(TABLE) == served and len(served) >= 36
    assert {access.scope for access in TABLE.values()} == ALL_SCOPES
    admin = sorted(name.rpartition(".")[2] for name, access in TABLE.items() if access.scope == "memory:admin")
    assert admin == ["ClearAll", "ForgetUser", "SetFormationSettings"]


def _service_without_access() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    file = descriptor_pb2.FileDescriptorProto(name="late.proto", package="late.v1", syntax="proto3")
    file.message_type.add(name="PingRequest")
    file.message_type.add(name="PingResponse")
    file.service.add(name="LateService").method.add(
        name="Ping", input_type=".late.v1.PingRequest", output_type=".late.v1.PingResponse"
    )
    pool.Add(file)
    return pool


def test_an_rpc_without_its_access_option_is_never_served():
    with pytest.raises(UnclassifiedMethod, match="late.v1.LateService.Ping has no"):
        access_table([_service_without_access().FindServiceByName("late.v1.LateService")])


def test_docs_show_the_contracts_table():
    doc = (ROOT / "docs" / "SECURITY.md").read_text()
    found = re.search(r"<!-- access-table:start -->\n(.*?)\n<!-- access-table:end -->", doc, re.S)
    assert found, "docs/SECURITY.md lost its access-table markers"
    assert found.group(1) == markdown_table(TABLE), "run scripts/access-table and paste its output into docs/SECURITY.md"


# -- static tokens --------------------------------------------------------------


def test_tokens_carry_scopes_and_an_end_user_in_both_formats():
    plain, reader, alice = new_token(), new_token(), new_token()
    lines = f"acme: {plain}\nacme: {reader} memory:read\nacme: {alice} memory:read memory:write user=alice\n"
    as_json = (
        f'{{"acme": ["{plain}", {{"token": "{reader}", "scopes": ["memory:read"]}},'
        f' {{"token": "{alice}", "scopes": "memory:read memory:write", "user": "alice"}}]}}'
    )
    for text in (lines, as_json, lines.replace("\n", ",")):
        entries = {entry.scopes: entry for _, entry in parse_tokens(text)}
        assert set(entries) == {ALL_SCOPES, frozenset({"memory:read"}), frozenset({"memory:read", "memory:write"})}
        assert entries[ALL_SCOPES].user_id is None  # a file without scopes keeps every scope, unbound
        assert entries[frozenset({"memory:read", "memory:write"})].user_id == "alice"


@pytest.mark.parametrize(
    "text",
    [
        "acme: 0123456789abcdef0123 memory:everything",
        "acme: 0123456789abcdef0123 user=alice user=bob",
        "acme: 0123456789abcdef0123 user=a/b",
        "acme: 0123456789abcdef0123 user=",
        '{"acme": [{"token": "0123456789abcdef0123", "scopes": [1]}]}',
        '{"acme": [{"token": "0123456789abcdef0123", "role": "x"}]}',
        "acme: 0123456789abcdef0123\nacme: 0123456789abcdef0123 memory:read",  # one token, two grants
    ],
)
def test_malformed_scopes_and_users_are_refused_without_echoing_tokens(text):
    with pytest.raises(TokenConfigError) as caught:
        load_tokens(tokens_env=text)
    assert "0123456789abcdef0123" not in str(caught.value)


# -- calls ------------------------------------------------------------------------


@pytest.fixture(scope="module")
async def scoped(tmp_path_factory):
    tokens = "\n".join(f"acme: {token} {scope}" for scope, token in ONLY.items())
    config = Config(listen="127.0.0.1:0", data_dir=tmp_path_factory.mktemp("scopes"), tokens=tokens, log_level="warning")
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=30) as http:
        yield app, channel, http
    await channel.close()
    await app.stop(0)


def _error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    info = error_details_pb2.ErrorInfo()
    for detail in rich_status(error).details:
        if detail.Is(info.DESCRIPTOR):
            detail.Unpack(info)
    return info


async def _grpc_answer(channel, method, token: str) -> tuple[grpc.StatusCode, error_details_pb2.ErrorInfo | None]:
    """The status of `method` called with an empty request (the scope is checked before it is read)."""
    response_type = message_factory.GetMessageClass(method.output_type)
    metadata = (("authorization", f"Bearer {token}"),)
    try:
        if method.server_streaming:
            stream = channel.unary_stream(path(method), response_deserializer=response_type.FromString)(
                b"", metadata=metadata, timeout=10
            )
            await stream.read()
            stream.cancel()
        else:
            await channel.unary_unary(path(method), response_deserializer=response_type.FromString)(b"", metadata=metadata, timeout=10)
    except grpc.aio.AioRpcError as error:
        return error.code(), _error_info(error)
    return grpc.StatusCode.OK, None


async def test_a_call_outside_the_tokens_scopes_names_the_scope_it_needs_over_grpc_and_http(scoped):
    _, channel, http = scoped
    methods = [m for service in SERVICES for m in service.descriptor.methods]
    for method in methods:
        needed = TABLE[method.full_name].scope
        for scope, token in ONLY.items():
            code, info = await _grpc_answer(channel, method, token)
            if scope == needed:  # admitted: whatever the empty request then answers, it is not a refusal
                assert code != grpc.StatusCode.PERMISSION_DENIED, method.full_name
                continue
            assert code == grpc.StatusCode.PERMISSION_DENIED, (method.full_name, scope, code)
            assert (info.reason, info.metadata["required_scope"]) == ("INSUFFICIENT_SCOPE", needed), method.full_name
            if method.server_streaming:
                continue  # Watch over HTTP: tests/http/test_watch.py covers stream errors
            response = await http.post(path(method), json={}, headers={"authorization": f"Bearer {token}"})
            body = response.json()
            infos = [d["debug"] for d in body["details"] if d["type"] == "google.rpc.ErrorInfo"]
            assert (response.status_code, body["code"]) == (403, "permission_denied"), method.full_name
            assert (infos[0]["reason"], infos[0]["metadata"]["required_scope"]) == ("INSUFFICIENT_SCOPE", needed)


def test_scope_names_follow_the_contract_enum():
    assert ALL_SCOPES == {"memory:read", "memory:write", "memory:admin"}
    assert len(ALL_SCOPES) == len(access_pb2.Scope.values()) - 1
