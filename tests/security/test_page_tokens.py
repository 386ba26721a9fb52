"""Page tokens are authenticated: forged ones are refused (the generator in test_bad_inputs.py
forges them on every listing RPC), and real ones work across replicas and restarts, on
both backends, because the key is stored once in the database (or set by the environment)."""

from __future__ import annotations

import random
import uuid

import grpc
import pytest

from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from memoryd.app import start
from memoryd.config import Config
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.paging import PageTokens
from tests.conftest import BACKENDS, mongo_uri_for
from tests.security.harness import Caller

SCOPE = ("full", "s")


async def test_a_token_is_bound_to_its_key_tenant_and_query():
    tokens = PageTokens.with_key("k1")
    token = await tokens.encode("acme", SCOPE, {"ts": 5, "seq": 2})
    assert await tokens.decode("acme", SCOPE, token) == {"ts": 5, "seq": 2}
    assert await tokens.decode("acme", SCOPE, "") is None
    for tenant, scope, other in (("globex", SCOPE, tokens), ("acme", ("full", "t"), tokens),
                                 ("acme", SCOPE, PageTokens.with_key("k2"))):
        with pytest.raises(InvalidArgument) as caught:
            await other.decode(tenant, scope, token)
        assert caught.value.violations[0].field == "page_token"


async def test_decoding_arbitrary_text_only_ever_raises_invalid_argument():
    tokens = PageTokens.with_key("k")
    real = await tokens.encode("t", SCOPE, {"ts": 1, "seq": 1})
    rnd = random.Random(7)
    alphabet = "ABCxyz019-_.=%{}\"' \x00é"
    candidates = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 80))) for _ in range(2000)]
    candidates += [real[:i] + c + real[i + 1:] for i in range(len(real)) for c in "A."]
    candidates += ["x" * 5000, real + real]
    for text in candidates:
        if text == real:
            continue
        with pytest.raises(InvalidArgument):
            await tokens.decode("t", SCOPE, text)


async def _app(data_dir, mongodb_uri: str, database: str, secret: str = ""):
    config = Config(listen="127.0.0.1:0", data_dir=data_dir, mongodb_uri=mongodb_uri, mongodb_database=database,
                    vectors_enabled=False, page_token_secret=secret)
    return await start(config)


async def _first_page(app, session: str) -> tuple[str, list[int]]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        page = await Caller(channel).call("memory", "GetFullHistory", mem.GetFullHistoryRequest(session_id=session, page_size=2))
    return page.next_page_token, [m.seq for m in page.messages]


async def _next_page(app, session: str, token: str) -> list[int] | grpc.StatusCode:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") as channel:
        try:
            page = await Caller(channel).call(
                "memory", "GetFullHistory", mem.GetFullHistoryRequest(session_id=session, page_size=2, page_token=token)
            )
        except grpc.aio.AioRpcError as error:
            return error.code()
    return [m.seq for m in page.messages]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_replicas_accept_each_others_tokens_across_restarts(backend, request, tmp_path):
    uri = "" if backend == "sqlite" else mongo_uri_for(backend, request)
    database = f"memoryd_tokens_{uuid.uuid4().hex[:8]}"
    first, second = await _app(tmp_path / "shared", uri, database), await _app(tmp_path / "shared", uri, database)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{first.port}") as channel:
            await Caller(channel).call("memory", "SaveMessages", mem.SaveMessagesRequest(
                session_id="s", messages=[message_pb2.Message(role="user", timestamp=10 + i) for i in range(5)]))
        token, seqs = await _first_page(first, "s")
        assert seqs == [1, 2] and token
        assert await _next_page(second, "s", token) == [3, 4]
    finally:
        await first.stop(0)
        await second.stop(0)
    restarted = await _app(tmp_path / "shared", uri, database)
    try:
        assert await _next_page(restarted, "s", token) == [3, 4]
    finally:
        await restarted.stop(0)
    # The environment-only key overrides the stored one: its tokens and the stored key's differ.
    elsewhere = tmp_path / "elsewhere"
    overridden = await _app(tmp_path / "shared", uri, database, secret="a deployment secret")
    peer = await _app(elsewhere, uri, database + "_peer", secret="a deployment secret")
    try:
        assert await _next_page(overridden, "s", token) == grpc.StatusCode.INVALID_ARGUMENT
        own, _ = await _first_page(overridden, "s")
        async with grpc.aio.insecure_channel(f"127.0.0.1:{peer.port}") as channel:
            await Caller(channel).call("memory", "SaveMessages", mem.SaveMessagesRequest(
                session_id="s", messages=[message_pb2.Message(role="user", timestamp=10 + i) for i in range(5)]))
        assert await _next_page(peer, "s", own) == [3, 4]
    finally:
        await overridden.stop(0)
        await peer.stop(0)
