"""The two algorithm rules of JWT verification (transport/oidc.py), each tested on its own so
that removing either one fails a test here (the other cannot hide it):

1. the allow-list: a header `alg` outside ALGORITHMS ("none", HS256, ...) is refused before
   any key is looked at: no read of the keys, whatever the kid;
2. the key's own `alg`: a token whose alg is not its key's is refused, even when both are
   accepted algorithms of one key type (RS384 or PS256 under an RS256 key verify with the
   same RSA key otherwise); a key published without `alg` (as some issuers publish) admits
   only the accepted algorithms, so "none" and HS256 tokens under it are UNAUTHENTICATED,
   never an internal error, even without rule 1.
"""

from __future__ import annotations

import grpc
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from memoryd.app import start
from memoryd.config import Config
from memoryd.domain.errors import Unauthenticated
from memoryd.transport.oidc import JwtSettings, JwtVerifier
from memoryd.v1 import memory_service_pb2 as mem
from tests.security.harness import Caller, error_details
from tests.security.oidc_issuer import AUDIENCE, Issuer, rsa_key
from tests.security.test_jwt import _signed_hs256

MIN_INTERVAL = 5.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def issuer():
    issuer = Issuer()  # "rsa-1": RS256, published with its alg
    issuer.add_key("rsa-bare", rsa_key(), "RS256", publish_alg=False)
    issuer.add_key("ec-bare", ec.generate_private_key(ec.SECP256R1()), "ES256", publish_alg=False)
    yield issuer
    issuer.close()


def _verifier(issuer: Issuer, clock: Clock) -> JwtVerifier:
    return JwtVerifier(
        JwtSettings(issuer=issuer.url, audience=AUDIENCE, refresh_seconds=3600, min_interval_seconds=MIN_INTERVAL),
        clock,
    )


def _none(issuer: Issuer, kid: str) -> str:
    return jwt.encode(issuer.claims(), None, algorithm="none", headers={"kid": kid})


def _hs256_with_public_key(issuer: Issuer, kid: str) -> str:
    pem = (
        issuer.keys[kid][0]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return _signed_hs256({"alg": "HS256", "typ": "JWT", "kid": kid}, issuer.claims(), pem)


async def _refused(verifier: JwtVerifier, token: str) -> str:
    with pytest.raises(Unauthenticated) as caught:
        await verifier.verify(token)
    return caught.value.reason


async def test_the_allow_list_refuses_before_any_key_is_looked_at(issuer):
    """Rule 1 alone: a kid no key has would otherwise read the keys (and answer KEY_UNKNOWN)."""
    clock = Clock()
    verifier = _verifier(issuer, clock)
    assert (await verifier.verify(issuer.token())).tenant == "acme"  # the keys are loaded
    for name, token in {
        "none": jwt.encode(issuer.claims(), None, algorithm="none", headers={"kid": "unheard-of"}),
        "HS256": jwt.encode(
            issuer.claims(), "a-shared-secret-of-32-bytes-long", algorithm="HS256", headers={"kid": "unheard-of"}
        ),
        "HS512": jwt.encode(
            issuer.claims(), "a-shared-secret-of-64-bytes-long" * 2, algorithm="HS512", headers={"kid": "x"}
        ),
    }.items():
        clock.now += MIN_INTERVAL  # a read of the keys would be allowed now
        reads = issuer.jwks_requests
        assert await _refused(verifier, token) == "TOKEN_ALGORITHM_REJECTED", name
        assert issuer.jwks_requests == reads, name  # refused on its header alone


async def test_a_token_must_use_its_keys_own_alg(issuer):
    """Rule 2 alone: these algs are all on the allow-list and verify with the key's RSA numbers."""
    verifier = _verifier(issuer, Clock())
    private = issuer.keys["rsa-1"][0]  # published with alg RS256
    for alg in ("RS384", "RS512", "PS256"):
        token = issuer.token(kid="rsa-1", key=private, alg=alg)
        assert await _refused(verifier, token) == "TOKEN_ALGORITHM_REJECTED", alg
    assert (await verifier.verify(issuer.token(kid="rsa-1"))).tenant == "acme"


async def test_keys_published_without_alg_admit_only_accepted_algorithms(issuer):
    verifier = _verifier(issuer, Clock())
    # They work: any accepted algorithm of the key's type.
    assert (await verifier.verify(issuer.token(kid="rsa-bare"))).tenant == "acme"
    assert (
        await verifier.verify(issuer.token(kid="rsa-bare", key=issuer.keys["rsa-bare"][0], alg="PS256"))
    ).tenant == "acme"
    assert (await verifier.verify(issuer.token(kid="ec-bare"))).tenant == "acme"
    # Another key type's algorithm does not fit.
    assert (
        await _refused(verifier, issuer.token(kid="ec-bare", key=rsa_key(), alg="RS256")) == "TOKEN_ALGORITHM_REJECTED"
    )
    # The key lookup on its own (as if the header's allow-list were gone): "none" and HMAC
    # never reach PyJWT, whose "none" algorithm cannot load a key (an internal error).
    for kid in ("rsa-bare", "ec-bare"):
        for alg in ("none", "HS256", "HS384"):
            with pytest.raises(Unauthenticated) as caught:
                await verifier.keys.key(kid, alg)
            assert caught.value.reason == "TOKEN_ALGORITHM_REJECTED", (kid, alg)
        assert await _refused(verifier, _none(issuer, kid)) == "TOKEN_ALGORITHM_REJECTED"
    assert await _refused(verifier, _hs256_with_public_key(issuer, "rsa-bare")) == "TOKEN_ALGORITHM_REJECTED"


async def test_alg_attacks_under_keys_without_alg_are_unauthenticated_over_grpc_and_http(issuer, tmp_path):
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path / "data",
        oidc_issuer=issuer.url,
        jwt_audience=AUDIENCE,
        log_level="warning",
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=30) as http:
            await Caller(channel, issuer.token(kid="rsa-bare"), "acme").call(
                "memory", "GetHistory", mem.GetHistoryRequest(session_id="s")
            )
            attacks = {
                "none under a key without alg": _none(issuer, "rsa-bare"),
                "HS256 with the public key of a key without alg": _hs256_with_public_key(issuer, "rsa-bare"),
                "PS256 under an RS256 key": issuer.token(kid="rsa-1", key=issuer.keys["rsa-1"][0], alg="PS256"),
                "RS256 under an EC key without alg": issuer.token(kid="ec-bare", key=rsa_key(), alg="RS256"),
            }
            for name, token in attacks.items():
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await Caller(channel, token, "acme").call(
                        "memory", "GetHistory", mem.GetHistoryRequest(session_id="s")
                    )
                assert (caught.value.code(), error_details(caught.value)[0]) == (
                    grpc.StatusCode.UNAUTHENTICATED,
                    "TOKEN_ALGORITHM_REJECTED",
                ), name
                response = await http.post(
                    "/memoryd.v1.MemoryService/GetHistory",
                    json={"session_id": "s"},
                    headers={"authorization": f"Bearer {token}"},
                )
                assert (response.status_code, response.json()["code"]) == (401, "unauthenticated"), name
    finally:
        await channel.close()
        await app.stop(0)
