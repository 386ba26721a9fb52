"""Bearer tokens → tenants, UNAUTHENTICATED with ErrorInfo, open health/reflection, safe binding, TLS/mTLS."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from memoryd.v1 import event_service_pb2 as ev_pb
from memoryd.v1 import memory_service_pb2 as mem_pb
from memoryd.v1 import message_pb2
from memoryd.app import security
from memoryd.config import Config
from memoryd.transport.auth import Authenticator, InsecureBindRefused, check_bind, is_loopback
from memoryd.transport.tokens import TokenConfigError, load_tokens, parse_tokens
from tests.processes import ServerProcess
from tests.security.harness import Caller, error_details, new_token
from tests import processes

MEMORYD = str(Path(sys.executable).with_name("memoryd"))


# -- token table ------------------------------------------------------------------


def test_line_json_and_hashed_formats_map_to_the_same_tenants():
    token_a, token_b = "a" * 20 + "-alpha", "b" * 20 + "-beta"
    digest_b = hashlib.sha256(token_b.encode()).hexdigest()
    lines = f"# comment\nacme: {token_a}\n\nglobex: sha256:{digest_b}  # hashed\n"
    as_json = f'{{"acme": "{token_a}", "globex": ["sha256:{digest_b}"]}}'
    inline = f"acme:{token_a},globex:sha256:{digest_b}"
    for text in (lines, as_json, inline):
        auth = Authenticator(parse_tokens(text))
        assert auth.static_caller(token_a).tenant == "acme"
        assert auth.static_caller(token_b).tenant == "globex"
        assert auth.tenants == {"acme", "globex"}


def test_only_digests_are_kept():
    token = new_token()
    auth = Authenticator(parse_tokens(f"acme: {token}"))
    assert token not in repr(vars(auth)) and token.encode() not in repr(vars(auth)).encode()


@pytest.mark.parametrize(
    "text",
    [
        "acme: short",  # under 16 characters
        '{"acme": "0123456789abcdef#0123"}',  # '#' starts a comment in the line format
        "acme",  # no separator
        "acme:   ",  # no token
        ": 0123456789abcdef0123",  # no tenant
        "ac me: 0123456789abcdef0123",  # tenant with a space
        "acme: sha256:abcd",  # not a sha256 digest
        '{"acme": 5}',
        '["0123456789abcdef0123"]',
        "{not json",
        "acme: 0123456789abcdef0123\nglobex: 0123456789abcdef0123",  # one token, two tenants
    ],
)
def test_malformed_token_tables_are_refused_without_echoing_tokens(text):
    with pytest.raises(TokenConfigError) as caught:
        load_tokens(tokens_env=text)
    assert "0123456789abcdef0123" not in str(caught.value)


def test_tokens_file_and_environment_combine(tmp_path):
    path = tmp_path / "tokens"
    token_a, token_b = new_token(), new_token()
    path.write_text(f"acme: {token_a}\n")
    auth = Authenticator(load_tokens(str(path), f"globex: {token_b}"))
    assert auth.static_caller(token_a).tenant == "acme" and auth.static_caller(token_b).tenant == "globex"
    with pytest.raises(TokenConfigError):
        load_tokens(str(tmp_path / "missing"))


# -- calls ------------------------------------------------------------------------


def _save(session: str = "s") -> mem_pb.SaveMessageRequest:
    return mem_pb.SaveMessageRequest(session_id=session, message=message_pb2.Message(role="user", content="hi"))


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        ((), "TOKEN_MISSING"),
        ((("authorization", "Bearer"),), "TOKEN_MISSING"),
        ((("authorization", "Basic dXNlcjpwYXNz"),), "TOKEN_MISSING"),
        ((("authorization", "Bearer not-a-known-token-at-all"),), "TOKEN_INVALID"),
        ((("authorization", "Bearer " + "x" * 5000),), "TOKEN_INVALID"),
    ],
)
async def test_missing_or_unknown_token_is_unauthenticated(secured, callers, metadata, reason):
    app, channel = secured
    stub = callers["acme"].memory
    before = await app.store.event_bounds("acme")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.SaveMessage(_save(), metadata=metadata, timeout=10)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_details(caught.value)[0] == reason
    assert await app.store.event_bounds("acme") == before


async def test_bearer_scheme_is_case_insensitive(callers):
    caller = callers["acme"]
    response = await caller.memory.GetHistory(
        mem_pb.GetHistoryRequest(session_id="s"), metadata=(("authorization", f"bearer {caller.token}"),), timeout=10
    )
    assert response is not None


async def test_watch_without_token_is_unauthenticated(secured, callers):
    stream = callers["acme"].events.Watch(ev_pb.WatchRequest(after_seq=0), timeout=10)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.read()
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_details(caught.value)[0] == "TOKEN_MISSING"


async def test_each_token_reaches_its_own_tenant(callers):
    for tenant, caller in callers.items():
        await caller.call("memory", "SaveMessage", _save(f"whoami-{tenant}"))
    for tenant, caller in callers.items():
        sessions = await caller.call("memory", "ListSessions", mem_pb.ListSessionsRequest())
        names = {s.session_id for s in sessions.sessions if s.session_id.startswith("whoami-")}
        assert names == {f"whoami-{tenant}"}


async def test_health_and_reflection_need_no_token(secured):
    _, channel = secured
    health = health_pb2_grpc.HealthStub(channel)
    reply = await health.Check(health_pb2.HealthCheckRequest(service="memoryd.v1.MemoryService"), timeout=10)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    responses = reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    async for response in responses:
        names = {s.name for s in response.list_services_response.service}
        assert "memoryd.v1.MemoryService" in names
        break


# -- safe defaults ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("listen", "loopback"),
    [
        ("127.0.0.1:50051", True),
        ("127.8.9.1:0", True),
        ("localhost:0", True),
        ("[::1]:50051", True),
        ("0.0.0.0:50051", False),
        ("[::]:50051", False),
        (":50051", False),
        ("10.1.2.3:50051", False),
        ("memoryd.example.com:50051", False),
    ],
)
def test_loopback_detection(listen, loopback):
    assert is_loopback(listen) is loopback
    if loopback:
        check_bind(listen, authenticated=False, allow_insecure_remote=False)
    else:
        with pytest.raises(InsecureBindRefused):
            check_bind(listen, authenticated=False, allow_insecure_remote=False)
        check_bind(listen, authenticated=True, allow_insecure_remote=False)
        check_bind(listen, authenticated=False, allow_insecure_remote=True)


def test_security_counts_tokens_or_mtls_as_authentication(tls_files):
    with pytest.raises(InsecureBindRefused):
        security(Config(listen="0.0.0.0:0"))
    auth, _ = security(Config(listen="0.0.0.0:0", tokens=f"acme: {new_token()}"))
    assert auth.enabled
    _, credentials = security(
        Config(listen="0.0.0.0:0", tls_cert=tls_files["server.crt"], tls_key=tls_files["server.key"], tls_client_ca=tls_files["ca.crt"])
    )
    assert credentials is not None
    with pytest.raises(InsecureBindRefused):  # TLS without client certificates authenticates no one
        security(Config(listen="0.0.0.0:0", tls_cert=tls_files["server.crt"], tls_key=tls_files["server.key"]))


def _serve_argv(tmp_path: Path, *args: str) -> list[str]:
    return [MEMORYD, "serve", "--data-dir", str(tmp_path / "data"), *args]


def _refused(tmp_path: Path, *args: str) -> tuple[int, str]:
    """Run a `memoryd serve` expected to refuse to start; its exit code and stderr."""
    argv = [*_serve_argv(tmp_path, *args), "--port-file", str(tmp_path / "port")]
    process = processes.run(argv, capture_output=True, text=True, timeout=60)
    return process.returncode, process.stderr


def _served_log(tmp_path: Path, *args: str, env: dict | None = None) -> str:
    """Start a `memoryd serve` (it must serve), stop it; its log."""
    server = ServerProcess(_serve_argv(tmp_path, *args), tmp_path, env=env)
    server.start()
    server.terminate()
    return server.log()


def test_cli_refuses_public_listen_without_auth(tmp_path):
    code, stderr = _refused(tmp_path, "--listen", "0.0.0.0:0")
    assert code == 2
    assert "refusing to listen on 0.0.0.0:0 without authentication" in stderr
    assert not (tmp_path / "port").exists()


def test_cli_forced_public_listen_serves_and_warns(tmp_path):
    stderr = _served_log(tmp_path, "--listen", "0.0.0.0:0", "--allow-insecure-remote")
    warnings = [line for line in stderr.splitlines() if '"insecure_remote_listen"' in line]
    assert len(warnings) == 2 and all('"warning"' in w for w in warnings)  # the gRPC and the HTTP listener


def test_cli_public_listen_with_tokens_serves(tmp_path):
    token = new_token()
    stderr = _served_log(tmp_path, "--listen", "0.0.0.0:0", env={"MEMORYD_TOKENS": f"acme: {token}"})
    assert token not in stderr


def test_cli_refuses_bad_token_file(tmp_path):
    (tmp_path / "tokens").write_text("acme: short\n")
    code, stderr = _refused(tmp_path, "--listen", "127.0.0.1:0", "--tokens-file", str(tmp_path / "tokens"))
    assert code == 2 and "at least 16 characters" in stderr


# -- TLS --------------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    processes.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory) -> dict[str, str]:
    """A throwaway CA, a server certificate for 127.0.0.1/localhost and a client certificate."""
    d = tmp_path_factory.mktemp("tls")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
             "-days", "2", "-subj", "/CN=memoryd-test-ca", cwd=d)
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, subject in (("server", "/CN=localhost"), ("client", "/CN=acme-agent")):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", subject, cwd=d)
        extra = ["-extfile", "server.ext"] if name == "server" else []
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", f"{name}.crt", "-days", "2", *extra, cwd=d)
    return {p.name: str(p) for p in d.iterdir()}


async def _tls_app(tmp_path, tls_files, *, mutual: bool, token: str):
    from memoryd.app import start

    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path,
        tokens=f"acme: {token}",
        tls_cert=tls_files["server.crt"],
        tls_key=tls_files["server.key"],
        tls_client_ca=tls_files["ca.crt"] if mutual else "",
    )
    return await start(config)


def _read(path: str) -> bytes:
    return Path(path).read_bytes()


async def test_tls_serves_encrypted_and_refuses_plaintext(tmp_path, tls_files):
    token = new_token()
    app = await _tls_app(tmp_path, tls_files, mutual=False, token=token)
    try:
        credentials = grpc.ssl_channel_credentials(root_certificates=_read(tls_files["ca.crt"]))
        async with grpc.aio.secure_channel(f"127.0.0.1:{app.port}", credentials) as channel:
            await Caller(channel, token, "acme").call("memory", "SaveMessage", _save())
        async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await Caller(channel, token, "acme").call("memory", "GetHistory", mem_pb.GetHistoryRequest(session_id="s"), timeout=5)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await app.stop(0)


async def test_mtls_requires_a_client_certificate_from_the_ca(tmp_path, tls_files):
    token = new_token()
    app = await _tls_app(tmp_path, tls_files, mutual=True, token=token)
    try:
        ca = _read(tls_files["ca.crt"])
        with_cert = grpc.ssl_channel_credentials(
            root_certificates=ca, private_key=_read(tls_files["client.key"]), certificate_chain=_read(tls_files["client.crt"])
        )
        async with grpc.aio.secure_channel(f"127.0.0.1:{app.port}", with_cert) as channel:
            caller = Caller(channel, token, "acme")
            await caller.call("memory", "SaveMessage", _save())
            with pytest.raises(grpc.aio.AioRpcError) as caught:  # the certificate does not replace the token
                await Caller(channel, None).call("memory", "GetHistory", mem_pb.GetHistoryRequest(session_id="s"))
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        without_cert = grpc.ssl_channel_credentials(root_certificates=ca)
        async with grpc.aio.secure_channel(f"127.0.0.1:{app.port}", without_cert) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await Caller(channel, token, "acme").call("memory", "GetHistory", mem_pb.GetHistoryRequest(session_id="s"), timeout=5)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await app.stop(0)


@pytest.mark.parametrize("mutual", [False, True])
async def test_the_health_command_follows_the_listen_address_and_tls(tmp_path, tls_files, mutual):
    """`memoryd health` (the container HEALTHCHECK) with the server's own settings: the port
    of --listen on loopback, TLS trusting the CA, under mTLS presenting --tls-cert."""
    import asyncio
    import dataclasses

    from memoryd.transport import health_probe

    app = await _tls_app(tmp_path, tls_files, mutual=mutual, token=new_token())
    try:
        config = dataclasses.replace(app.config, listen=f"0.0.0.0:{app.port}", health_tls_ca=tls_files["ca.crt"])
        assert await asyncio.to_thread(health_probe.check, config) == "SERVING"
        plaintext = dataclasses.replace(config, tls_cert="", tls_key="")
        assert await asyncio.to_thread(health_probe.check, plaintext) == "UNREACHABLE"
    finally:
        await app.stop(0)
