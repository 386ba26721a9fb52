"""`ChatModel` over any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama,
llama.cpp's server, llama-cpp-python's server) with the `openai` SDK: structured output
(`response_format` json_schema, strict), no tools, temperature 0, the SDK's own retries off
(formation retries from the log, with its backoff). Every answer is validated against the
schema (llm.parse_answer).

A server that refuses the json_schema form (400 or 422, or a 500 naming `response_format`:
llama-cpp-python's server accepts only `{"type": "json_object", "schema": ...}` and its route
answers a request outside its model with 500) is asked the same call again in that form, and in
that form from then on; the answer is validated against the schema either way.

In the json_object form, upper bounds on lengths and counts (`maxLength`, `maxItems`,
`maxProperties`) are checked on the answer, not sent: llama-cpp-python's server builds a grammar
from the schema and expands a bound into that many nested rules (the summary's 20,000
characters: 20,000 nested rules), which crashed its 0.3.36 server here (SIGSEGV in libllama at
the end of its thread's stack) and, with a 1 GiB stack, failed to parse.
"""

from __future__ import annotations

import logging
from typing import Any

import openai

from memoryd.formation import llm

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 120.0
JSON_SCHEMA = "json_schema"  # OpenAI's structured output
JSON_OBJECT = "json_object"  # JSON mode with a schema (llama-cpp-python's server, Anyscale's form)


def _retry_after(error: openai.APIStatusError) -> float | None:
    value = error.response.headers.get("retry-after") if error.response is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


UNSENT = frozenset({"maxLength", "maxItems", "maxProperties"})


def sent_schema(schema: Any) -> Any:
    """The schema as sent to the model: `schema` without upper bounds on lengths and counts
    (under `properties` and `$defs`, names are names, never keywords)."""
    if isinstance(schema, list):
        return [sent_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    named = ("properties", "$defs", "definitions", "patternProperties")
    return {
        key: (
            {n: sent_schema(v) for n, v in value.items()}
            if key in named and isinstance(value, dict)
            else sent_schema(value)
        )
        for key, value in schema.items()
        if key not in UNSENT
    }


def _refused_format(error: openai.APIStatusError) -> bool:
    """Whether the server refused the request's form: 400 or 422, or llama-cpp-python's 500 that
    names the field (its route turns every validation error into a 500)."""
    return error.status_code in (400, 422) or (error.status_code == 500 and "response_format" in error.message)


class OpenAIChat:
    def __init__(
        self, base_url: str, model: str, api_key: str = "", *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self.model = model
        # A local server (llama.cpp, vLLM) needs no key, but the SDK wants one.
        self.client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "unused", max_retries=0, timeout=timeout_seconds
        )
        self.response_format = JSON_SCHEMA  # JSON_OBJECT once the server refused JSON_SCHEMA

    def _format(self, request: llm.ChatRequest) -> Any:
        if self.response_format == JSON_OBJECT:
            return {"type": JSON_OBJECT, "schema": sent_schema(request.schema)}
        return {
            "type": JSON_SCHEMA,
            "json_schema": {
                "name": request.schema_name,
                "schema": dict(request.schema),
                "strict": request.strict,
            },
        }

    async def _create(self, request: llm.ChatRequest) -> Any:
        return await self.client.chat.completions.create(
            model=self.model,
            messages=[
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ],
            response_format=self._format(request),
            temperature=0,
            max_tokens=request.max_tokens,
        )

    async def _negotiated(self, request: llm.ChatRequest) -> Any:
        """The completion; a server that refuses the json_schema form is asked in the json_object
        form, and kept at it when that is not refused too."""
        try:
            return await self._create(request)
        except openai.APIStatusError as error:
            if self.response_format != JSON_SCHEMA or not _refused_format(error):
                raise
        self.response_format = JSON_OBJECT
        try:
            response = await self._create(request)
        except openai.APIStatusError as error:
            if _refused_format(error):
                self.response_format = JSON_SCHEMA  # refused in both forms: not the form's fault
            raise
        log.warning("formation: the model server refused response_format json_schema; asking json_object")
        return response

    async def complete(self, request: llm.ChatRequest) -> llm.ChatAnswer:
        try:
            response = await self._negotiated(request)
        except openai.RateLimitError as error:
            raise llm.LlmFailed(llm.RATE_LIMITED, "429", retry_after=_retry_after(error)) from None
        except openai.APITimeoutError:
            raise llm.LlmFailed(llm.TIMEOUT) from None
        except openai.APIConnectionError:
            raise llm.LlmFailed(llm.UNREACHABLE) from None
        except openai.APIStatusError as error:
            kind = llm.SERVER_ERROR if error.status_code >= 500 else llm.REJECTED
            raise llm.LlmFailed(kind, str(error.status_code), retry_after=_retry_after(error)) from None
        except openai.APIError as error:  # a body the SDK could not read
            raise llm.LlmFailed(llm.INVALID_ANSWER, type(error).__name__) from None
        usage = response.usage
        prompt = usage.prompt_tokens if usage is not None else 0
        completion = usage.completion_tokens if usage is not None else 0
        if not response.choices:
            raise llm.LlmFailed(llm.INVALID_ANSWER, "no choices", prompt_tokens=prompt, completion_tokens=completion)
        choice = response.choices[0]
        if getattr(choice.message, "refusal", None):
            raise llm.LlmFailed(llm.REFUSED, prompt_tokens=prompt, completion_tokens=completion)
        if choice.finish_reason == "length":
            raise llm.LlmFailed(llm.TRUNCATED, prompt_tokens=prompt, completion_tokens=completion)
        try:
            data = llm.parse_answer(choice.message.content, request.schema)
        except llm.LlmFailed as error:
            error.prompt_tokens, error.completion_tokens = prompt, completion
            raise
        log.debug("formation model answer", extra={"schema": request.schema_name, "tokens": prompt + completion})
        return llm.ChatAnswer(data, prompt, completion)

    async def close(self) -> None:
        await self.client.close()
