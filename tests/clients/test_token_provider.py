"""The clients' token provider against a live `memoryd serve` verifying JWTs with a static JWKS
(--jwks-file): called for every call and every Watch (re)opening, sync and async; a Watch
whose JWT expires is ended by the server (TOKEN_EXPIRED) and resumes with the provider's
next token, missing no event."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator

import pytest

from memoryd_client import MemoryClient, SyncMemoryClient, UnauthenticatedError, message
from tests.processes import MemorydServer
from tests.security.oidc_issuer import AUDIENCE, Issuer


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    issuer = Issuer()
    yield issuer
    issuer.close()


@pytest.fixture(scope="module")
def jwt_memoryd(issuer: Issuer, tmp_path_factory) -> Iterator[MemorydServer]:
    workdir = tmp_path_factory.mktemp("jwt-clients")
    (workdir / "jwks.json").write_text(json.dumps(issuer.jwks()))
    server = MemorydServer(
        workdir,
        "--oidc-issuer", issuer.url, "--jwks-file", str(workdir / "jwks.json"), "--jwt-audience", AUDIENCE,
        "--jwt-leeway-seconds", "0",
    )  # fmt: skip
    server.start()
    yield server
    server.stop()


class Provider:
    """Hands out JWTs living `lifetime` seconds, counting the calls; `broken` hands out junk."""

    def __init__(self, issuer: Issuer, tenant: str, lifetime: int = 600) -> None:
        self.issuer, self.tenant, self.lifetime = issuer, tenant, lifetime
        self.calls = 0
        self.broken = False

    def __call__(self) -> str:
        self.calls += 1
        if self.broken:
            return "not.a.token"
        return self.issuer.token(tenant=self.tenant, exp=int(time.time()) + self.lifetime)


async def test_the_async_client_asks_its_provider_for_every_call(jwt_memoryd, issuer):
    provider = Provider(issuer, f"t-{uuid.uuid4().hex[:8]}")

    async def async_provider() -> str:  # MemoryClient also takes a coroutine function
        return provider()

    async with MemoryClient(jwt_memoryd.target, token_provider=async_provider) as client:
        await client.save_message("s", message("user", "hello"))
        assert [m.content for m in await client.get_history("s")] == ["hello"]
        assert provider.calls == 2
        provider.broken = True  # the provider's token is what the server sees, call by call
        with pytest.raises(UnauthenticatedError) as caught:
            await client.get_history("s")
        assert caught.value.reason == "TOKEN_INVALID"
        provider.broken = False
        assert len(await client.get_history("s")) == 1


def test_the_sync_client_asks_its_provider_for_every_call(jwt_memoryd, issuer):
    provider = Provider(issuer, f"t-{uuid.uuid4().hex[:8]}")
    with SyncMemoryClient(jwt_memoryd.target, token_provider=provider) as client:
        client.save_message("s", message("user", "hello"))
        assert len(client.get_history("s")) == 1 and provider.calls == 2
    with pytest.raises(ValueError):
        SyncMemoryClient(jwt_memoryd.target, token="x" * 20, token_provider=provider)

    async def coroutine_provider() -> str:
        return provider()

    with SyncMemoryClient(jwt_memoryd.target, token_provider=coroutine_provider) as client:
        with pytest.raises(TypeError):
            client.get_history("s")


async def test_a_watch_resumes_with_a_fresh_token_when_its_token_expires(jwt_memoryd, issuer):
    provider = Provider(issuer, f"t-{uuid.uuid4().hex[:8]}", lifetime=2)
    async with MemoryClient(jwt_memoryd.target, token_provider=provider) as client:
        async with client.watch(after_seq=0) as watch:
            await watch.started()
            seen = []
            for i in range(3):  # each save after its predecessor's token expired
                await client.save_message("w", message("user", f"m{i}"))
                event = await asyncio.wait_for(anext(watch), 60)
                seen.append(event.messages_appended.messages[0].seq)
                await asyncio.sleep(2.5)
            assert seen == [1, 2, 3] and watch.reconnects >= 1  # ended at expiry, resumed, nothing lost
