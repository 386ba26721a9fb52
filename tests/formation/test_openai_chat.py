"""The response format memoryd asks for: OpenAI's json_schema form, and the json_object form
with the schema for a server that refuses it (llama-cpp-python 0.3.36's server validates
`response_format.type` against "text" / "json_object" and answers a 500 naming the field to
"json_schema"; other servers answer 400 or 422), against the scripted chat-completions server
(a real HTTP server)."""

from __future__ import annotations

import json

import pytest

from memoryd.formation import llm
from memoryd.formation.openai_chat import OpenAIChat
from tests.llm_server import Call, Reply, Script, ScriptedLLM, answer

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary"],
    "properties": {"summary": {"type": "string", "minLength": 1}},
}
REQUEST = llm.ChatRequest("system", "user", "memoryd_summary", SCHEMA)


def refused(what: str) -> Reply:
    """FastAPI's answer to a request body outside the server's model."""
    detail = {"type": "literal_error", "loc": ["body", "response_format", "type"], "msg": what}
    return Reply(status=422, raw=json.dumps({"detail": [detail]}))


def refused_by_llama_cpp_python() -> Reply:
    """llama-cpp-python 0.3.36's server's answer to response_format json_schema (as it answered
    here: its route turns the validation error into a 500)."""
    message = (
        "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
        "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
    )
    body = {"error": {"message": message, "type": "internal_server_error", "param": None, "code": None}}
    return Reply(status=500, raw=json.dumps(body))


def json_object_only(refusal: Reply) -> Script:
    def serve(call: Call) -> Reply:
        fmt = call.body.get("response_format") or {}
        if fmt.get("type") not in ("text", "json_object"):
            return refusal
        assert fmt.get("schema") == SCHEMA  # the grammar is built from it
        return answer({"summary": f"call {call.number}"})

    return serve


def kinds(server: ScriptedLLM) -> list[str]:
    return [c.body["response_format"]["type"] for c in server.calls]


@pytest.mark.parametrize(
    "refusal",
    [refused_by_llama_cpp_python(), refused("Input should be 'text' or 'json_object'")],
    ids=["llama-cpp-python-500", "422"],
)
async def test_a_server_that_refuses_json_schema_is_asked_json_object_with_the_schema_from_then_on(refusal):
    with ScriptedLLM(json_object_only(refusal)) as server:
        chat = OpenAIChat(server.url, server.model, timeout_seconds=5.0)
        try:
            first = await chat.complete(REQUEST)
            second = await chat.complete(REQUEST)
        finally:
            await chat.close()
        assert (first.data, second.data) == ({"summary": "call 1"}, {"summary": "call 2"})
        assert kinds(server) == ["json_schema", "json_object", "json_object"]
        assert server.calls[0].body["response_format"]["json_schema"]["strict"] is True


async def test_a_server_that_takes_json_schema_never_gets_json_object():
    with ScriptedLLM(lambda call: answer({"summary": "fine"})) as server:
        chat = OpenAIChat(server.url, server.model, timeout_seconds=5.0)
        try:
            for _ in range(3):
                assert (await chat.complete(REQUEST)).data == {"summary": "fine"}
        finally:
            await chat.close()
        assert kinds(server) == ["json_schema"] * 3


async def test_a_request_refused_in_both_forms_fails_and_the_next_call_asks_json_schema_again():
    with ScriptedLLM(lambda call: refused("model not loaded")) as server:
        chat = OpenAIChat(server.url, server.model, timeout_seconds=5.0)
        try:
            for _ in range(2):
                with pytest.raises(llm.LlmFailed) as failed:
                    await chat.complete(REQUEST)
                assert failed.value.kind == llm.REJECTED
        finally:
            await chat.close()
        assert kinds(server) == ["json_schema", "json_object", "json_schema", "json_object"]


async def test_an_answer_in_the_json_object_form_is_still_validated_against_the_schema():
    def loose(call: Call) -> Reply:
        if call.body["response_format"]["type"] == "json_schema":
            return refused("Input should be 'text' or 'json_object'")
        return answer({"summary": ""})  # JSON, but not under the schema (minLength 1)

    with ScriptedLLM(loose) as server:
        chat = OpenAIChat(server.url, server.model, timeout_seconds=5.0)
        try:
            with pytest.raises(llm.LlmFailed) as failed:
                await chat.complete(REQUEST)
        finally:
            await chat.close()
        assert failed.value.kind == llm.INVALID_ANSWER


async def test_a_plain_server_error_is_not_taken_for_a_refused_form():
    with ScriptedLLM(lambda call: Reply(status=500, raw=json.dumps({"error": {"message": "overloaded"}}))) as server:
        chat = OpenAIChat(server.url, server.model, timeout_seconds=5.0)
        try:
            with pytest.raises(llm.LlmFailed) as failed:
                await chat.complete(REQUEST)
        finally:
            await chat.close()
        assert failed.value.kind == llm.SERVER_ERROR
        assert kinds(server) == ["json_schema"]


async def test_the_json_object_form_sends_no_upper_bounds_and_the_answer_is_still_held_to_them():
    bounded = {
        "type": "object",
        "additionalProperties": False,
        "required": ["summary", "maxLength"],
        "properties": {
            "summary": {"type": "string", "minLength": 1, "maxLength": 5},
            "maxLength": {"type": "array", "items": {"type": "string"}, "maxItems": 2},  # a property's name stays
        },
    }
    answers = iter([{"summary": "fine", "maxLength": []}, {"summary": "far too long", "maxLength": []}])

    def serve(call: Call) -> Reply:
        if call.body["response_format"]["type"] == "json_schema":
            return refused_by_llama_cpp_python()
        return answer(next(answers))

    with ScriptedLLM(serve) as server:
        chat = OpenAIChat(server.url, server.model, timeout_seconds=5.0)
        request = llm.ChatRequest("system", "user", "bounded", bounded)
        try:
            assert (await chat.complete(request)).data == {"summary": "fine", "maxLength": []}
            with pytest.raises(llm.LlmFailed) as failed:
                await chat.complete(request)
        finally:
            await chat.close()
        assert failed.value.kind == llm.INVALID_ANSWER
        sent = server.calls[1].body["response_format"]["schema"]
        assert sent["properties"] == {
            "summary": {"type": "string", "minLength": 1},
            "maxLength": {"type": "array", "items": {"type": "string"}},
        }
        assert server.calls[0].body["response_format"]["json_schema"]["schema"] == bounded  # json_schema: as given
