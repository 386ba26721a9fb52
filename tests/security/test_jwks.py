"""The issuer's keys (JWKS) under rotation and breakage, against an issuer the tests serve on
loopback (tests/security/oidc_issuer.py) and a `--jwks-file`:

- an answer that is valid JSON but not a usable key set (`{"keys": "garbage"}`, `{"keys": []}`,
  entries that are not keys, only unusable keys) never replaces the cached keys: tokens keep
  verifying, from the issuer and from the file;
- a token with an unknown kid reads the keys at once, at most once per
  `--jwks-min-interval-seconds` (not the periodic interval);
- a key removed at the issuer is refused after the periodic read (`--jwks-refresh-seconds`)
  although no token forced one, and the Watch streams its tokens opened end with
  UNAUTHENTICATED (TOKEN_REVOKED) over gRPC and HTTP, while the other streams run on;
- an HTTP Watch stream opened with a JWT ends at the token's expiry (gRPC: test_rotation.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import grpc
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import RSAAlgorithm

from memoryd.app import start
from memoryd.config import Config
from memoryd.domain.errors import Unauthenticated
from memoryd.transport.oidc import JwtSettings, JwtVerifier
from memoryd.v1 import event_pb2
from memoryd.v1 import event_service_pb2 as ev
from memoryd.v1 import memory_service_pb2 as mem
from tests.http.test_watch import envelope, frames
from tests.security.harness import Caller, error_details
from tests.security.oidc_issuer import AUDIENCE, Issuer, public_jwk, rsa_key

PATIENCE = 60.0  # seconds a test waits for the server to notice a change before it fails
MIN_INTERVAL = 5.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def issuer():
    issuer = Issuer()
    yield issuer
    issuer.close()


def _verifier(issuer: Issuer, clock: Clock, **settings) -> JwtVerifier:
    settings = {
        "issuer": issuer.url,
        "audience": AUDIENCE,
        "refresh_seconds": 60,
        "min_interval_seconds": MIN_INTERVAL,
        **settings,
    }
    return JwtVerifier(JwtSettings(**settings), clock)


def bad_key_sets() -> dict[str, object]:
    """Valid JSON that is not a usable key set, by name."""
    other = rsa_key()
    return {
        "keys is a string": {"keys": "garbage"},
        "keys is empty": {"keys": []},
        "no keys member": {"issuer": "x"},
        "a list, not an object": [{"kty": "RSA"}],
        "a string": "keys",
        "entries that are not keys": {"keys": [1, "x", None, [], {}, {"kid": "rsa-1"}]},
        "a symmetric (HMAC) key": {"keys": [{"kty": "oct", "kid": "rsa-1", "k": "c2VjcmV0LXNlY3JldA"}]},
        "an unknown key type": {"keys": [{"kty": "XYZ", "kid": "rsa-1"}]},
        "a key type that is a list": {"keys": [{"kty": ["RSA"], "kid": "rsa-1"}]},
        "an alg that is a list": {"keys": [{**public_jwk(other, "rsa-1", None), "alg": ["RS256"]}]},
        "a use that is an object": {"keys": [{**public_jwk(other, "rsa-1", "RS256"), "use": {"sig": 1}}]},
        "broken RSA numbers": {"keys": [{"kty": "RSA", "kid": "rsa-1", "n": "!!", "e": "AQAB"}]},
        "an unsupported curve": {"keys": [{"kty": "EC", "kid": "rsa-1", "crv": "P-999", "x": "AA", "y": "AA"}]},
        "encryption keys only": {"keys": [{**public_jwk(other, "enc-1", "RS256"), "use": "enc"}]},
        "an alg outside the allow-list": {"keys": [{**public_jwk(other, "rsa-1", None), "alg": "HS256"}]},
        "a kid that is not a string": {"keys": [{**public_jwk(other, "x", "RS256"), "kid": 7}]},
        "private key material": {"keys": [{**json.loads(RSAAlgorithm.to_jwk(other)), "kid": "rsa-1", "alg": "RS256"}]},
    }


async def test_an_unusable_key_set_from_the_issuer_never_replaces_the_good_keys(issuer):
    clock = Clock()
    verifier = _verifier(issuer, clock, refresh_seconds=3600)  # only the reads the test makes
    good = issuer.token()
    assert (await verifier.verify(good)).tenant == "acme"
    for name, answer in bad_key_sets().items():
        issuer.jwks_answer = answer
        clock.now += MIN_INTERVAL
        reads = issuer.jwks_requests
        assert await verifier.keys.refresh() is False, name  # read, found unusable, not taken
        assert issuer.jwks_requests == reads + 1, name
        assert (await verifier.verify(good)).tenant == "acme", name
        # An unknown kid reads again (the interval has passed) and still keeps the keys.
        clock.now += MIN_INTERVAL
        with pytest.raises(Unauthenticated) as caught:
            await verifier.verify(issuer.token(kid="rotated", key=rsa_key(), alg="RS256"))
        assert caught.value.reason == "TOKEN_KEY_UNKNOWN" and issuer.jwks_requests == reads + 2, name
        assert (await verifier.verify(good)).tenant == "acme", name
    # A set with unusable entries beside a usable key is taken: its usable keys only.
    rotated = rsa_key()
    issuer.jwks_answer = {"keys": ["garbage", {"kty": "oct", "k": "AA"}, public_jwk(rotated, "rsa-2", "RS256")]}
    clock.now += MIN_INTERVAL
    assert await verifier.keys.refresh() is True
    assert (await verifier.verify(issuer.token(kid="rsa-2", key=rotated, alg="RS256"))).tenant == "acme"
    with pytest.raises(Unauthenticated) as caught:
        await verifier.verify(good)
    assert caught.value.reason == "TOKEN_KEY_UNKNOWN"  # rsa-1 is no longer published


def _write(path: Path, document: object | str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(document if isinstance(document, str) else json.dumps(document))
    os.replace(temporary, path)


async def test_an_unusable_jwks_file_changes_nothing(issuer, tmp_path):
    jwks = tmp_path / "jwks.json"
    _write(jwks, issuer.jwks())
    clock = Clock()
    verifier = _verifier(issuer, clock, jwks_file=str(jwks), refresh_seconds=3600)
    good = issuer.token()
    assert (await verifier.verify(good)).tenant == "acme"
    for name, document in {**bad_key_sets(), "not JSON": "{keys", "empty": ""}.items():
        _write(jwks, document)
        clock.now += MIN_INTERVAL
        assert await verifier.keys.refresh() is False, name
        assert (await verifier.verify(good)).tenant == "acme", name
    assert issuer.jwks_requests == 0  # the file only: nothing fetched


async def test_a_running_server_keeps_its_keys_when_the_jwks_file_turns_unusable(issuer, tmp_path):
    jwks = tmp_path / "jwks.json"
    _write(jwks, issuer.jwks())
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path / "data",
        http_listen="off",
        oidc_issuer=issuer.url,
        jwt_audience=AUDIENCE,
        jwks_file=str(jwks),
        tokens_reload_seconds=0.05,
        log_level="warning",
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        caller = Caller(channel, issuer.token(), "acme")
        await caller.call("memory", "GetHistory", mem.GetHistoryRequest(session_id="s"))
        keys = app.authenticator.jwt.keys
        for document in ({"keys": "garbage"}, {"keys": []}, {"keys": [{"kty": "oct", "k": "AA"}]}):
            reads = keys.fetches
            _write(jwks, document)
            deadline = time.monotonic() + PATIENCE
            while keys.fetches == reads:  # the file watch notices the change and reads it
                assert time.monotonic() < deadline, "the changed --jwks-file was never read"
                await asyncio.sleep(0.05)
            while keys._inflight is not None:
                await asyncio.sleep(0.01)
            await caller.call("memory", "GetHistory", mem.GetHistoryRequest(session_id="s"))  # still accepted
        # A usable file with a new key is taken: the new key's tokens are accepted.
        issuer.add_key("rsa-2", rsa_key(), "RS256")
        _write(jwks, issuer.jwks())
        await until_admitted(Caller(channel, issuer.token(kid="rsa-2"), "acme"))
    finally:
        await channel.close()
        await app.stop(0)


async def test_an_unknown_kid_reads_the_keys_at_once_at_most_once_per_min_interval(issuer):
    clock = Clock()
    verifier = _verifier(issuer, clock)
    assert (await verifier.verify(issuer.token())).tenant == "acme"
    reads = issuer.jwks_requests
    issuer.add_key("rsa-rotated", rsa_key(), "RS256")
    rotated = issuer.token(kid="rsa-rotated")
    with pytest.raises(Unauthenticated) as caught:  # within the min interval of the last read: not read again
        await verifier.verify(rotated)
    assert caught.value.reason == "TOKEN_KEY_UNKNOWN" and issuer.jwks_requests == reads
    clock.now += MIN_INTERVAL  # far less than the periodic interval (60 s)
    callers = await asyncio.gather(*(verifier.verify(rotated) for _ in range(20)))  # twenty at once: one read
    assert {c.tenant for c in callers} == {"acme"} and issuer.jwks_requests == reads + 1
    # A flood of made-up kids costs one read per interval.
    forged = [issuer.token(kid=f"made-up-{i}", key=rsa_key(), alg="RS256") for i in range(3)]
    clock.now += MIN_INTERVAL
    for token in forged * 5:
        with pytest.raises(Unauthenticated):
            await verifier.verify(token)
    assert issuer.jwks_requests == reads + 2


async def test_stale_keys_are_reread_in_the_background_when_the_periodic_read_is_late(issuer):
    """The backstop of the periodic task: a call that finds the keys older than
    --jwks-refresh-seconds starts a read; the cached keys serve meanwhile."""
    clock = Clock()
    verifier = _verifier(issuer, clock)
    issuer.add_key("rsa-temp", rsa_key(), "RS256")
    temporary = issuer.token(kid="rsa-temp")
    assert (await verifier.verify(temporary)).tenant == "acme"
    issuer.remove_key("rsa-temp")
    clock.now += 30
    assert (await verifier.verify(temporary)).tenant == "acme"  # not stale yet: no read
    reads = issuer.jwks_requests
    clock.now += 31
    await verifier.verify(issuer.token())  # stale: a read starts
    deadline = time.monotonic() + PATIENCE
    while issuer.jwks_requests == reads or verifier.keys._inflight is not None:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    with pytest.raises(Unauthenticated) as caught:
        await verifier.verify(temporary)
    assert caught.value.reason == "TOKEN_KEY_UNKNOWN"


async def until_admitted(caller: Caller) -> None:
    deadline = time.monotonic() + PATIENCE
    while True:
        try:
            await caller.call("memory", "GetHistory", mem.GetHistoryRequest(session_id="probe"))
            return
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAUTHENTICATED or time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.05)


async def stream_end(stream) -> grpc.aio.AioRpcError:
    """Read a Watch stream until it fails; the error it ended with."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async with asyncio.timeout(PATIENCE):
            while True:
                await stream.read()
    return caught.value


def _http_reasons(error: dict) -> list[str]:
    return [d["debug"]["reason"] for d in error.get("details", []) if d.get("type") == "google.rpc.ErrorInfo"]


@pytest.fixture
async def rotating(issuer, tmp_path):
    """A server that re-reads the keys every second (and on an unknown kid at most every 0.1 s)."""
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path / "data",
        oidc_issuer=issuer.url,
        jwt_audience=AUDIENCE,
        jwt_leeway_seconds=0,
        jwks_refresh_seconds=1,
        jwks_min_interval_seconds=0.1,
        log_level="warning",
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=PATIENCE) as http:
            yield app, channel, http
    finally:
        await channel.close()
        await app.stop(0)


async def test_a_key_published_at_the_issuer_is_accepted_on_its_first_tokens(issuer, rotating):
    app, channel, _ = rotating
    await until_admitted(Caller(channel, issuer.token(), "acme"))
    issuer.add_key("ec-new", ec.generate_private_key(ec.SECP256R1()), "ES256")
    # The next call with the new kid reads the keys (rate limited to one per 0.1 s here).
    await until_admitted(Caller(channel, issuer.token(kid="ec-new"), "acme"))


async def test_a_removed_key_is_refused_and_its_streams_end_over_grpc_and_http(issuer, rotating):
    """Nothing forces a read here (every kid is known): only the periodic one sees the removal."""
    app, channel, http = rotating
    issuer.add_key("rsa-temp", rsa_key(), "RS256")
    stay, go = Caller(channel, issuer.token(), "acme"), Caller(channel, issuer.token(kid="rsa-temp"), "acme")
    await until_admitted(go)
    staying_watch, going_watch = stay.watch(ev.WatchRequest(), PATIENCE), go.watch(ev.WatchRequest(), PATIENCE)
    for stream in (staying_watch, going_watch):
        assert (await stream.read()).HasField("progress")  # live
    headers = {"content-type": "application/connect+json", "authorization": f"Bearer {go.token}"}
    async with http.stream("POST", "/memoryd.v1.EventService/Watch", content=envelope({}), headers=headers) as response:
        http_frames = frames(response)
        assert "progress" in (await anext(http_frames))[1]

        issuer.remove_key("rsa-temp")

        ended = await stream_end(going_watch)
        assert (ended.code(), error_details(ended)[0]) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")
        async with asyncio.timeout(PATIENCE):
            flags, last = await anext(http_frames)
            while flags != 0x02:  # progress frames may come before the end
                flags, last = await anext(http_frames)
        assert last["error"]["code"] == "unauthenticated" and _http_reasons(last["error"]) == ["TOKEN_REVOKED"]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await go.call("memory", "GetHistory", mem.GetHistoryRequest(session_id="probe"))
    assert (caught.value.code(), error_details(caught.value)[0]) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_KEY_UNKNOWN",
    )
    # The stream of the key that stays saw no interruption.
    await stay.call(
        "events",
        "PublishEvent",
        ev.PublishEventRequest(session_id="after-removal", compress_requested=event_pb2.CompressRequested()),
    )
    async with asyncio.timeout(PATIENCE):
        while not (response := await staying_watch.read()).HasField("event"):
            pass
    assert response.event.session_id == "after-removal"
    staying_watch.cancel()


async def test_an_http_watch_opened_with_a_jwt_ends_at_its_expiry(issuer, rotating):
    app, channel, http = rotating
    token = issuer.token(exp=int(time.time()) + 3)
    headers = {"content-type": "application/connect+json", "authorization": f"Bearer {token}"}
    async with http.stream("POST", "/memoryd.v1.EventService/Watch", content=envelope({}), headers=headers) as response:
        http_frames = frames(response)
        assert "progress" in (await anext(http_frames))[1]
        async with asyncio.timeout(PATIENCE):
            flags, last = await anext(http_frames)
            while flags != 0x02:
                flags, last = await anext(http_frames)
    assert last["error"]["code"] == "unauthenticated" and _http_reasons(last["error"]) == ["TOKEN_EXPIRED"]
