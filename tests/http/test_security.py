"""The HTTP port keeps gRPC's rules: loopback without auth, TLS/mTLS, limits, validation errors."""

from __future__ import annotations

import ssl

import grpc
import httpx
import pytest

from memoryd.app import security, start
from memoryd.config import Config
from memoryd.domain.limits import Limits
from memoryd.transport.auth import InsecureBindRefused
from tests.http.calls import grpc_call, grpc_error, http_error, method, path
from tests.security.harness import new_token
from tests.security.test_auth import tls_files  # noqa: F401 - the throwaway CA and certificates

GET_HISTORY = method("memoryd.v1.MemoryService.GetHistory")
SAVE_MESSAGE = method("memoryd.v1.MemoryService.SaveMessage")


def test_http_is_refused_beyond_loopback_without_auth():
    with pytest.raises(InsecureBindRefused):
        security(Config(listen="127.0.0.1:0", http_listen="0.0.0.0:0"))
    security(Config(listen="127.0.0.1:0", http_listen="0.0.0.0:0", tokens=f"acme: {new_token()}"))
    security(Config(listen="127.0.0.1:0", http_listen="0.0.0.0:0", allow_insecure_remote=True), warn=False)


async def test_limits_and_validation_answer_as_over_grpc(server):
    too_long = {"session_id": "x" * 300, "limit": -1}
    with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
        await grpc_call(server.channel, GET_HISTORY, too_long, server.bearer("acme"))
    response = await server.http.post(path(GET_HISTORY), json=too_long, headers=server.bearer("acme"))
    assert response.status_code == 400
    over_http = http_error(response.json())
    assert over_http == grpc_error(over_grpc.value)
    (bad_request,) = [d for d in over_http["details"] if d["type"] == "google.rpc.BadRequest"]
    assert {v["field"] for v in bad_request["field_violations"]} == {"session_id", "limit"}


async def test_undecodable_json_answers_invalid_argument_naming_the_body(server):
    response = await server.http.post(
        path(GET_HISTORY), content=b'{"session_id": ', headers={"content-type": "application/json", **server.bearer("acme")}
    )
    assert response.status_code == 400
    error = http_error(response.json())
    assert error["code"] == "invalid_argument"
    (bad_request,) = [d for d in error["details"] if d["type"] == "google.rpc.BadRequest"]
    assert [v["field"] for v in bad_request["field_violations"]] == ["body"]


async def test_bodies_past_the_request_limit_are_refused(tmp_path):
    app = await start(Config(listen="127.0.0.1:0", data_dir=tmp_path, vectors_enabled=False, limits=Limits(max_request_bytes=4096)))
    try:
        big = {"session_id": "s", "message": {"role": "user", "content": "x" * 8192}}
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}") as http:
            response = await http.post(path(SAVE_MESSAGE), json=big)
        assert response.status_code == 429 and response.json()["code"] == "resource_exhausted"
        async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as over_grpc:
                await grpc_call(channel, SAVE_MESSAGE, big)
        assert over_grpc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        await app.stop(0)


async def test_http_off_serves_no_http(tmp_path):
    app = await start(Config(listen="127.0.0.1:0", data_dir=tmp_path, vectors_enabled=False, http_listen="off"))
    try:
        assert app.http is None and app.http_port == 0
    finally:
        await app.stop(0)


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mtls"])
async def test_tls_settings_apply_to_the_http_port(tmp_path, tls_files, mutual):  # noqa: F811
    token = new_token()
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path,
        vectors_enabled=False,
        tokens=f"acme: {token}",
        tls_cert=tls_files["server.crt"],
        tls_key=tls_files["server.key"],
        tls_client_ca=tls_files["ca.crt"] if mutual else "",
    )
    app = await start(config)
    try:
        trusted = ssl.create_default_context(cafile=tls_files["ca.crt"])
        if mutual:
            anonymous = ssl.create_default_context(cafile=tls_files["ca.crt"])
            async with httpx.AsyncClient(base_url=f"https://127.0.0.1:{app.http_port}", verify=anonymous) as http:
                with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
                    await http.post(path(GET_HISTORY), json={"session_id": "s"}, headers={"authorization": f"Bearer {token}"})
            trusted.load_cert_chain(tls_files["client.crt"], tls_files["client.key"])
        async with httpx.AsyncClient(base_url=f"https://127.0.0.1:{app.http_port}", verify=trusted) as http:
            response = await http.post(path(GET_HISTORY), json={"session_id": "s"}, headers={"authorization": f"Bearer {token}"})
            assert response.status_code == 200
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}") as http:
            with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError)):
                await http.post(path(GET_HISTORY), json={"session_id": "s"})
    finally:
        await app.stop(0)
