"""JWT bearer tokens against an OIDC issuer the test serves on loopback (discovery document and
JWKS, keys and tokens made here): the attacks each answer UNAUTHENTICATED with their reason,
over gRPC and HTTP, and store nothing; valid tokens carry their tenant, scopes and end user;
the keys are read on an unknown kid at most once per interval, never blocking the server."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time

import grpc
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.app import start
from memoryd.config import Config
from memoryd.domain.errors import Unauthenticated
from memoryd.transport.oidc import JwksUnavailable, JwtSettings, JwtVerifier
from tests.security.harness import Caller, error_details, new_token
from tests.security.oidc_issuer import AUDIENCE, Issuer, rsa_key

STATIC = new_token()


@pytest.fixture(scope="module")
def issuer():
    issuer = Issuer()
    issuer.add_key("ec-1", ec.generate_private_key(ec.SECP256R1()), "ES256")
    yield issuer
    issuer.close()


@pytest.fixture(scope="module")
async def served(issuer, tmp_path_factory):
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path_factory.mktemp("jwt"),
        tokens=f"acme: {STATIC}",
        oidc_issuer=issuer.url,
        jwt_audience=AUDIENCE,
        jwt_user_claim="end_user",
        log_level="warning",
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=30) as http:
        yield app, channel, http
    await channel.close()
    await app.stop(0)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _signed_hs256(header: dict, claims: dict, secret: bytes) -> str:
    """An HS256 JWS made by hand: PyJWT itself refuses a PEM public key as an HMAC secret."""
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"


def _tampered(token: str, **changes) -> str:
    """The token with claims changed in its payload and its signature kept."""
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims.update(changes)
    return f"{header}.{_b64(json.dumps(claims).encode())}.{signature}"


def attacks(issuer: Issuer) -> dict[str, tuple[str, str]]:
    """name -> (token, the reason it is refused with)."""
    now = int(time.time())
    public_pem = issuer.keys["rsa-1"][0].public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return {
        "expired": (issuer.token(exp=now - 120, iat=now - 720), "TOKEN_EXPIRED"),
        "not yet valid": (issuer.token(nbf=now + 600), "TOKEN_NOT_YET_VALID"),
        "issued in the future": (issuer.token(iat=now + 600, exp=now + 1200), "TOKEN_NOT_YET_VALID"),
        "wrong audience": (issuer.token(aud="another-service"), "TOKEN_AUDIENCE_MISMATCH"),
        "wrong issuer": (issuer.token(iss="https://issuer.example"), "TOKEN_ISSUER_MISMATCH"),
        "alg none": (jwt.encode(issuer.claims(), None, algorithm="none", headers={"kid": "rsa-1"}), "TOKEN_ALGORITHM_REJECTED"),
        "HS256 with the RSA public key as secret": (
            _signed_hs256({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}, issuer.claims(), public_pem),
            "TOKEN_ALGORITHM_REJECTED",
        ),
        "RS256 under an ES256 key's kid": (issuer.token(kid="ec-1", key=issuer.keys["rsa-1"][0], alg="RS256"), "TOKEN_ALGORITHM_REJECTED"),
        "unknown kid": (issuer.token(kid="no-such-key", key=rsa_key(), alg="RS256"), "TOKEN_KEY_UNKNOWN"),
        "tampered payload": (_tampered(issuer.token(), tenant="globex"), "TOKEN_SIGNATURE_INVALID"),
        "signed by another key": (issuer.token(key=rsa_key()), "TOKEN_SIGNATURE_INVALID"),
        "no tenant claim": (issuer.token(tenant=None), "TOKEN_CLAIM_INVALID"),
        "tenant claim not a tenant name": (issuer.token(tenant="two words"), "TOKEN_CLAIM_INVALID"),
        "end user claim not a user id": (issuer.token(end_user="a/b"), "TOKEN_CLAIM_INVALID"),
        "no exp": (issuer.token(exp=None), "TOKEN_CLAIM_INVALID"),
        "no aud": (issuer.token(aud=None), "TOKEN_CLAIM_INVALID"),
        "not a JWT": ("not.a.jwt-at-all", "TOKEN_INVALID"),
    }


def _save(session: str) -> mem.SaveMessageRequest:
    return mem.SaveMessageRequest(session_id=session, message=message_pb2.Message(role="user", content="from a JWT"))


async def test_every_attack_is_unauthenticated_with_its_reason_over_grpc_and_http(served, issuer):
    app, channel, http = served
    before = await app.store.event_bounds("acme"), await app.store.event_bounds("globex")
    answers = {}
    for name, (token, reason) in attacks(issuer).items():
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await Caller(channel, token, "acme").call("memory", "SaveMessage", _save("attacked"))
        got = (caught.value.code(), error_details(caught.value)[0])
        response = await http.post(
            "/memoryd.v1.MemoryService/SaveMessage",
            json={"session_id": "attacked", "message": {"role": "user", "content": "x"}},
            headers={"authorization": f"Bearer {token}"},
        )
        body = response.json()
        reasons = [d["debug"]["reason"] for d in body.get("details", []) if d["type"] == "google.rpc.ErrorInfo"]
        answers[name] = (got[0].name, got[1], response.status_code, body["code"], reasons)
        assert got == (grpc.StatusCode.UNAUTHENTICATED, reason), (name, got)
        assert (response.status_code, body["code"], reasons) == (401, "unauthenticated", [reason]), (name, body)
    print("\nattack -> answer (gRPC code, reason; HTTP status):")
    for name, (code, reason, status, _, _) in answers.items():
        print(f"  {name}: {code} {reason}; HTTP {status}")
    assert (await app.store.event_bounds("acme"), await app.store.event_bounds("globex")) == before  # nothing stored


async def test_valid_tokens_carry_tenant_scopes_and_end_user(served, issuer):
    app, channel, _ = served
    tag = str(time.time_ns())
    rs = Caller(channel, issuer.token(tenant=f"jwt-{tag}"), f"jwt-{tag}")
    saved = await rs.call("memory", "SaveMessage", _save(f"s-{tag}"))
    es = Caller(channel, issuer.token(kid="ec-1", tenant=f"jwt-{tag}"), f"jwt-{tag}")  # an ES256 key of the same issuer
    history = await es.call("memory", "GetHistory", mem.GetHistoryRequest(session_id=f"s-{tag}"))
    assert [m.id for m in history.messages] == [saved.message.id]
    assert await app.store.event_bounds(f"jwt-{tag}") != (0, 0)  # the tenant came from the claim

    # Scopes: `scp` as a list works like `scope`; memory:admin is needed for ClearAll.
    reader = Caller(channel, issuer.token(tenant=f"jwt-{tag}", scope=None, scp=["memory:read", "openid"]), f"jwt-{tag}")
    await reader.call("memory", "GetHistory", mem.GetHistoryRequest(session_id=f"s-{tag}"))
    for caller, request_name, request in (
        (reader, "SaveMessage", _save(f"s-{tag}")),
        (rs, "ClearAll", mem.ClearAllRequest()),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await caller.call("memory", request_name, request)
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert error_details(caught.value)[0] == "INSUFFICIENT_SCOPE"

    # The end user claim binds the token: its saves make sessions that user's, others are closed to it.
    alice = Caller(channel, issuer.token(tenant=f"jwt-{tag}", end_user="alice"), f"jwt-{tag}")
    await alice.call("memory", "SaveMessage", _save(f"alice-{tag}"))
    session = await rs.call("memory", "GetSession", mem.GetSessionRequest(session_id=f"alice-{tag}"))
    assert session.session.attributes.user_id == "alice"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await alice.call("memory", "GetHistory", mem.GetHistoryRequest(session_id=f"s-{tag}"))
    assert error_details(caught.value)[0] == "USER_ACCESS_DENIED"
    # Static tokens keep working beside JWTs.
    await Caller(channel, STATIC, "acme").call("memory", "GetHistory", mem.GetHistoryRequest(session_id="s"))


async def test_made_up_kids_read_the_keys_at_most_once_per_interval(served, issuer):
    _, channel, _ = served
    before = issuer.jwks_requests
    key = rsa_key()
    forged = [issuer.token(kid=f"made-up-{i}", key=key, alg="RS256") for i in range(40)]
    results = await asyncio.gather(
        *(Caller(channel, token, "acme").call("memory", "GetHistory", mem.GetHistoryRequest(session_id="s")) for token in forged),
        return_exceptions=True,
    )
    assert all(isinstance(r, grpc.aio.AioRpcError) and error_details(r)[0] == "TOKEN_KEY_UNKNOWN" for r in results)
    assert issuer.jwks_requests - before <= 1  # concurrent: one shared read (then --jwks-min-interval-seconds)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _verifier(issuer: Issuer, clock: Clock, **settings) -> JwtVerifier:
    return JwtVerifier(JwtSettings(issuer=issuer.url, audience=AUDIENCE, refresh_seconds=60, **settings), clock)


async def test_a_key_added_at_the_issuer_is_read_on_its_first_token_after_the_interval(issuer):
    """--jwks-min-interval-seconds (5 s by default) rate-limits the reads an unknown kid asks
    for (tests/security/test_jwks.py has the rest of rotation)."""
    clock = Clock()
    verifier = _verifier(issuer, clock)
    assert (await verifier.verify(issuer.token())).tenant == "acme"
    reads = issuer.jwks_requests
    issuer.add_key("rsa-rotated", rsa_key(), "RS256")
    rotated = issuer.token(kid="rsa-rotated")
    try:
        with pytest.raises(Unauthenticated) as caught:  # within the interval: no read, unknown
            await verifier.verify(rotated)
        assert caught.value.reason == "TOKEN_KEY_UNKNOWN" and issuer.jwks_requests == reads
        clock.now += 6
        # Twenty at once after the interval: one read between them, and every one verifies.
        callers = await asyncio.gather(*(verifier.verify(rotated) for _ in range(20)))
        assert {c.tenant for c in callers} == {"acme"} and issuer.jwks_requests == reads + 1
    finally:
        issuer.remove_key("rsa-rotated")


async def test_a_stuck_issuer_times_out_without_blocking_the_event_loop(issuer):
    verifier = _verifier(issuer, Clock(), timeout_seconds=0.5)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    issuer.hang.set()
    try:
        with pytest.raises(JwksUnavailable):  # UNAVAILABLE, which clients retry
            await verifier.verify(issuer.token())
    finally:
        issuer.hang.clear()
        issuer.release()
        ticker.cancel()
    assert ticks > 0  # the loop ran other work while the read was stuck


def test_jwt_settings_need_an_https_issuer_except_on_loopback():
    from memoryd.transport.oidc import OidcConfigError

    JwtSettings(issuer="https://login.example.com/tenant", audience="a")
    JwtSettings(issuer="http://127.0.0.1:8080", audience="a")
    with pytest.raises(OidcConfigError):
        JwtSettings(issuer="http://login.example.com", audience="a")
    with pytest.raises(OidcConfigError):
        JwtSettings(issuer="https://login.example.com", audience="")
