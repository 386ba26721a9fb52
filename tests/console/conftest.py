"""One memoryd (console on, as by default) with two tenants' data, and headless Chromium.

The browser is Debian's `chromium` (scripts/bootstrap --test installs it where apt can),
driven by Playwright's Python API with that binary: Playwright's own browser download is
never used. Without either, the browser tests skip, saying which is missing.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from memoryd.app import App, start
from memoryd.config import Config
from tests.formation.script import Model
from tests.llm_server import ScriptedLLM
from tests.security.harness import new_token
from tests.vectors.index_state import drained

CHROMIUM = os.environ.get("MEMORYD_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# A 2x2 PNG, the image segment a message carries inline.
PNG = (
    "data:image/png;base64,"
    + base64.b64encode(
        bytes.fromhex(
            "89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a73"
            "0000001649444154789c63f8cfc0f09f81e13f0303c3ff0c0c00002d0c05fb1f2a2d7d0000000049454e44ae426082"
        )
    ).decode()
)
# The tenant's custom strategy: what the user likes, as {"item": "..."}.
LIKES = {
    "name": "likes",
    "prompt": "What the user says they like.",
    "json_schema": json.dumps(
        {
            "type": "object",
            "additionalProperties": False,
            "required": ["item"],
            "properties": {"item": {"type": "string"}},
        }
    ),
    "enabled": True,
}
SESSION = "旅行-café"  # the session the views are shown on
OWNED = "ann-chat"  # ann's session: memory formation forms her facts from it
OTHER = "globex-secret"  # the other tenant's session
MESSAGES = [
    {"role": "user", "content": "我们下周去京都旅行 🚄", "timestamp": "1765000000000"},
    {"role": "assistant", "content": "いいですね！京都の紅葉は最高です 🍁", "timestamp": "1765000060000"},
    {"role": "user", "content": "Book the ryokan near Gion, please", "timestamp": "1765000120000", "kind": "request"},
    {
        "role": "assistant",
        "content": "Here is the ryokan photo",
        "timestamp": "1765000180000",
        "segments": [{"type": "image", "data": {"url": PNG}}],
    },
    {"role": "user", "content": "Also remind me about the tea ceremony", "timestamp": "1765000240000"},
]


@dataclass
class Served:
    app: App
    base: str
    tokens: dict[str, str] = field(default_factory=dict)  # role -> token
    api: httpx.AsyncClient | None = None

    async def call(self, who: str, rpc: str, body: dict) -> dict:
        assert self.api is not None
        response = await self.api.post(
            f"/memoryd.v1.{rpc}", json=body, headers={"authorization": f"Bearer {self.tokens[who]}"}
        )
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="module")
async def served(tmp_path_factory):
    tokens = {"admin": new_token(), "reader": new_token(), "ann": new_token(), "globex": new_token()}
    text = "\n".join(
        [
            f"acme: {tokens['admin']}",  # every scope
            f"acme: {tokens['reader']} memory:read",
            f"acme: {tokens['ann']} memory:read memory:write user=ann",  # end user ann's memory only
            f"globex: {tokens['globex']}",
        ]
    )
    llm = ScriptedLLM(Model()).__enter__()
    app = None
    try:
        config = Config(
            listen="127.0.0.1:0", data_dir=tmp_path_factory.mktemp("console"), tokens=text, log_level="warning",
            llm_url=llm.url, llm_model=llm.model,
        )  # fmt: skip
        app = await start(config)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=30) as api:
            s = Served(app, f"http://127.0.0.1:{app.http_port}", tokens, api)
            await s.call(
                "admin",
                "MemoryService/SaveMessages",
                {"session_id": SESSION, "messages": MESSAGES, "session_attributes": {"labels": {"trip": "kyoto"}}},
            )
            await s.call(
                "admin",
                "SummaryService/SaveSummary",
                {"session_id": SESSION, "from_seq": "1", "to_seq": "2", "text": "They plan a Kyoto trip (京都)."},
            )
            # a custom strategy (the scripted model: "i like <thing>" gives {"item": "<thing>"})
            await s.call(
                "admin",
                "FormationService/SetFormationSettings",
                {"settings": {"custom_strategies": {"strategies": [LIKES]}}},
            )
            told = await s.call(
                "admin",
                "MemoryService/SaveMessages",
                {
                    "session_id": OWNED,
                    "session_attributes": {"user_id": "ann"},
                    "messages": [
                        {"role": "user", "content": "my city is Paris", "timestamp": "1765000300000"},
                        {"role": "user", "content": "i like matcha", "timestamp": "1765000360000"},
                    ],
                },
            )
            await s.call(
                "admin", "FormationService/WaitForFormation", {"event_seq": told["event_seq"], "timeout_ms": "20000"}
            )
            await s.call(
                "globex",
                "MemoryService/SaveMessages",
                {
                    "session_id": OTHER,
                    "messages": [
                        {
                            "role": "user",
                            "content": "globex only: the ryokan budget is secret",
                            "timestamp": "1765000000000",
                        }
                    ],
                },
            )
            await drained(app.vectors)
            yield s
    finally:
        if app is not None:
            await app.stop(0)
        llm.close()


@pytest.fixture(scope="module")
async def browser():
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium; scripts/bootstrap --test does where it can)")
    manager = async_playwright()
    playwright = await manager.start()
    try:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield chromium
        finally:
            await chromium.close()
    finally:
        await manager.__aexit__(None, None, None)
