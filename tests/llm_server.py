"""A deterministic, scripted OpenAI chat-completions server for tests: a real HTTP server
(http.server in a thread) speaking `POST /v1/chat/completions`, so memoryd's formation talks
to it through the `openai` SDK exactly as to OpenAI, vLLM or llama.cpp's server.

Each test gives it a script: a function of the call (`Call`: the messages, the schema asked
for, the call's number) returning a `Reply`: an answer (JSON content), or a fault (malformed
JSON, a status such as 429 with Retry-After or 5xx, a delay past the client's timeout, a
refusal, a cut-off answer with finish_reason "length"). It records every call with the tokens
it reported (a whitespace-split count: deterministic, not a tokenizer).

    with ScriptedLLM(script) as llm:
        ... --llm-url llm.url ...
        assert llm.calls
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Call:
    number: int  # 0-based, in arrival order
    model: str
    messages: list[dict[str, Any]]
    schema_name: str  # response_format.json_schema.name ("" without one)
    schema: dict[str, Any]
    body: dict[str, Any]
    peer: int = 0  # the client's TCP port (which process called: tests/formation/test_engine.py)

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "system"), "")

    @property
    def user(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "user"), "")


@dataclass
class Reply:
    content: str | None = None  # the assistant message's content
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    raw: str | None = None  # the whole response body instead of a completion
    delay: float = 0.0  # seconds before answering (a client timeout shorter than it: a timeout)
    refusal: str | None = None
    finish_reason: str = "stop"


def answer(data: Any) -> Reply:
    return Reply(content=json.dumps(data))


def rate_limited(retry_after: float = 0.0) -> Reply:
    return Reply(
        status=429,
        headers={"Retry-After": f"{retry_after:g}"},
        raw=json.dumps({"error": {"message": "slow down", "type": "rate_limit"}}),
    )


def server_error(status: int = 503) -> Reply:
    return Reply(status=status, raw=json.dumps({"error": {"message": "unavailable", "type": "server_error"}}))


def tokens(text: str) -> int:
    return len(text.split())


Script = Callable[[Call], Reply]


class ScriptedLLM:
    def __init__(self, script: Script, model: str = "scripted-1") -> None:
        self.script = script
        self.model = model
        self.calls: list[Call] = []
        self.replies: list[Reply] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def calls_for(self, schema_name: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.schema_name == schema_name]

    def __enter__(self) -> ScriptedLLM:
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _handle(self, body: dict[str, Any], peer: int = 0) -> tuple[Reply, dict[str, Any] | None]:
        fmt = body.get("response_format") or {}
        schema = fmt.get("json_schema") or {}
        with self._lock:
            call = Call(
                len(self.calls),
                body.get("model", ""),
                body.get("messages", []),
                schema.get("name", ""),
                schema.get("schema", {}),
                body,
                peer,
            )
            self.calls.append(call)
        reply = self.script(call)
        with self._lock:
            self.replies.append(reply)
        if reply.raw is not None or reply.status != 200:
            return reply, None
        prompt = sum(tokens(m.get("content") or "") for m in call.messages)
        completion = tokens(reply.content or "")
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.refusal is not None:
            message = {"role": "assistant", "content": None, "refusal": reply.refusal}
        return reply, {
            "id": f"chatcmpl-{call.number}",
            "object": "chat.completion",
            "created": 0,
            "model": call.model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def _handler(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, json.dumps({"error": {"message": "not found"}}))
                    return
                reply, completion = outer._handle(json.loads(raw or b"{}"), self.client_address[1])
                if reply.delay:
                    time.sleep(reply.delay)
                body = reply.raw if completion is None else json.dumps(completion)
                self._send(reply.status, body or "", reply.headers)

            def _send(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
                data = body.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                    pass

        return Handler


def main() -> None:
    """`python -m tests.llm_server --port-file FILE`: serve tests/formation/script.py's model
    until killed (the load benchmark's instant model, in a process of its own)."""
    import argparse
    from pathlib import Path

    from tests.formation.script import Model

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    with ScriptedLLM(Model()) as llm:
        Path(args.port_file).write_text(str(llm._server.server_address[1]))
        threading.Event().wait()


if __name__ == "__main__":
    main()
