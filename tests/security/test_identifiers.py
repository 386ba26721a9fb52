"""One rule for identifiers (domain/identifiers.py), wherever they come from: request fields
over gRPC and HTTP/JSON, JWT claims (tenant and end user), the tokens file. Look-alike ids
(lone combining marks, non-ASCII spaces, fillers, the braille blank, a variation selector
alone, invisible formatting characters) are refused everywhere; ids in other scripts,
accented ones and emoji with a variation selector after their base character are accepted.
(tests/security/test_bad_inputs.py sends the same look-alikes in every id field of every RPC.)"""

from __future__ import annotations

import grpc
import httpx
import pytest

from memoryd.app import start
from memoryd.config import Config
from memoryd.domain.identifiers import id_problem
from memoryd.transport.principals import tenant_problem, user_id_problem
from memoryd.transport.tokens import TokenConfigError, parse_tokens
from memoryd.v1 import memory_service_pb2 as mem
from memoryd.v1 import message_pb2
from tests.security.harness import Caller, error_details, new_token
from tests.security.oidc_issuer import AUDIENCE, Issuer

# Each prints like another id (or like nothing).
LOOK_ALIKES = {
    "zero-width space": "alice\u200b",
    "zero-width joiner": "al\u200dice",
    "bidi override": "\u202eecila",
    "bidi isolate": "alice\u2066",
    "C1 control (NEL)": "alice\u0085",
    "word joiner": "ali\u2060ce",
    "soft hyphen": "ali\u00adce",
    "BOM": "\ufeffalice",
    "tag character": "alice\U000e0041",
    "lone combining acute": "\u0301",
    "leading combining acute": "\u0301alice",
    "combining mark after a space": "alice \u0301",
    "NBSP": "a\u00a0b",
    "ideographic space": "a\u3000b",
    "em space": "a\u2003b",
    "narrow NBSP": "a\u202fb",
    "Hangul filler": "\u3164",
    "Hangul choseong filler": "\u115f",
    "Hangul jungseong filler": "\u1160",
    "halfwidth Hangul filler": "\uffa0",
    "filler inside": "ali\u3164ce",
    "braille blank": "\u2800",
    "variation selector alone": "\ufe0f",
    "variation selector first": "\ufe0falice",
    "two variation selectors": "a\ufe0f\ufe0f",
    "combining grapheme joiner": "ali\u034fce",
    "line separator": "alice\u2028",
}

# Real ids people have: accepted everywhere (none holds a space or "/", so also as end users).
GOOD_IDS = {
    "Chinese": "张三",
    "Japanese": "ユーザー太郎",
    "Korean": "김민수",
    "Devanagari": "नमस्ते",
    "Thai": "สวัสดี",
    "accented, precomposed": "café",
    "accented, combining": "cafe\u0301",
    "emoji": "👍🏽",
    "emoji with VS16 after its base": "\u2764\ufe0f",
    "keycap sequence": "1\ufe0f\u20e3",
    "ideographic variation sequence": "葛\U000e0100",
    "ASCII": "alice@example.com",
}


def test_the_rule_refuses_look_alikes_and_keeps_real_ids():
    for name, value in LOOK_ALIKES.items():
        assert id_problem(value, 64), name
        assert user_id_problem(value), name  # end user ids (claims, user=)
        assert tenant_problem(value), name  # tenants (claims, tokens file)
    for name, value in GOOD_IDS.items():
        assert id_problem(value, 64) is None, name
        assert user_id_problem(value) is None, name
        assert tenant_problem(value) is None, name


def test_the_tokens_file_refuses_look_alike_users_and_tenants():
    token = new_token()
    for name, value in LOOK_ALIKES.items():
        with pytest.raises(TokenConfigError):
            parse_tokens(f'{{"acme": {{"token": "{token}", "user": "{value}"}}}}'.encode("unicode_escape").decode())
        with pytest.raises(TokenConfigError):
            parse_tokens(f'{{"{value}": "{token}"}}'.encode("unicode_escape").decode(), source=name)
    assert parse_tokens(f"acme: {token} user={GOOD_IDS['Chinese']}")[0][1].user_id == GOOD_IDS["Chinese"]


async def _refused_field(caller: Caller, request) -> tuple[grpc.StatusCode, list[str]]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await caller.call("memory", "SaveMessage", request)
    return caught.value.code(), error_details(caught.value)[1]


def _save(session: str, **attributes) -> mem.SaveMessageRequest:
    return mem.SaveMessageRequest(
        session_id=session,
        message=message_pb2.Message(role="user", content="hi"),
        session_attributes=message_pb2.SessionAttributes(**attributes) if attributes else None,
    )


async def test_requests_refuse_look_alike_ids_over_grpc_and_http(secured, callers):
    app, _ = secured
    caller = callers["acme"]
    before = await app.store.event_bounds("acme")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=30) as http:
        for name, value in LOOK_ALIKES.items():
            assert await _refused_field(caller, _save(value)) == (grpc.StatusCode.INVALID_ARGUMENT, ["session_id"]), (
                name
            )
            code, fields = await _refused_field(caller, _save("s-ok", user_id=value))
            assert (code, fields) == (grpc.StatusCode.INVALID_ARGUMENT, ["session_attributes.user_id"]), name
            code, fields = await _refused_field(caller, _save("s-ok", labels={"team": value}))
            assert (code, fields) == (grpc.StatusCode.INVALID_ARGUMENT, ["session_attributes.labels"]), name
            response = await http.post(
                "/memoryd.v1.MemoryService/SaveMessage",
                json={"session_id": value, "message": {"role": "user", "content": "hi"}},
                headers={"authorization": f"Bearer {caller.token}"},
            )
            assert (response.status_code, response.json()["code"]) == (400, "invalid_argument"), name
        assert await app.store.event_bounds("acme") == before  # nothing stored
        for name, value in GOOD_IDS.items():
            await caller.call("memory", "SaveMessage", _save(value, user_id=value))
            history = await caller.call("memory", "GetHistory", mem.GetHistoryRequest(session_id=value))
            assert [m.content for m in history.messages] == ["hi"], name
            response = await http.post(
                "/memoryd.v1.MemoryService/GetSession",
                json={"session_id": value},
                headers={"authorization": f"Bearer {caller.token}"},
            )
            assert response.status_code == 200 and response.json()["session"]["attributes"]["user_id"] == value, name


@pytest.fixture(scope="module")
async def jwt_served(tmp_path_factory):
    issuer = Issuer()
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path_factory.mktemp("ids-jwt"),
        oidc_issuer=issuer.url,
        jwt_audience=AUDIENCE,
        jwt_user_claim="end_user",
        log_level="warning",
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=30) as http:
            yield issuer, app, channel, http
    finally:
        await channel.close()
        await app.stop(0)
        issuer.close()


async def test_jwt_claims_follow_the_same_rule_over_grpc_and_http(jwt_served):
    issuer, app, channel, http = jwt_served
    cases = {f"end user {name}": issuer.token(end_user=value) for name, value in LOOK_ALIKES.items()}
    cases |= {f"tenant {name}": issuer.token(tenant=value) for name, value in LOOK_ALIKES.items()}
    for name, token in cases.items():
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await Caller(channel, token, "acme").call("memory", "SaveMessage", _save("claimed"))
        assert (caught.value.code(), error_details(caught.value)[0]) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "TOKEN_CLAIM_INVALID",
        ), name
        claim = "end_user" if name.startswith("end user") else "tenant"
        assert f"the token's {claim!r} claim" in caught.value.details(), name  # names the claim and what is wrong
        response = await http.post(
            "/memoryd.v1.MemoryService/SaveMessage",
            json={"session_id": "claimed", "message": {"role": "user", "content": "x"}},
            headers={"authorization": f"Bearer {token}"},
        )
        assert (response.status_code, response.json()["code"]) == (401, "unauthenticated"), name
    tenant_token = issuer.token()
    for name, value in GOOD_IDS.items():
        user = Caller(channel, issuer.token(end_user=value), "acme")
        await user.call("memory", "SaveMessage", _save(f"of-{value}"))
        got = await Caller(channel, tenant_token, "acme").call(
            "memory", "GetSession", mem.GetSessionRequest(session_id=f"of-{value}")
        )
        assert got.session.attributes.user_id == value, name
        # The user the claim named is one the API can name: its sessions list by user id.
        listed = await Caller(channel, tenant_token, "acme").call(
            "memory", "ListSessions", mem.ListSessionsRequest(user_id=value, page_size=10)
        )
        assert [s.session_id for s in listed.sessions] == [f"of-{value}"], name
