"""One memoryd serving gRPC and HTTP/JSON (Connect), with bearer tokens for many tenants.

Every parity case runs in its own pair of tenants (one for gRPC, one for HTTP), so both
transports see the same state without the cases seeing each other's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import grpc
import httpx
import pytest

from memoryd.app import App, start
from memoryd.config import Config
from tests.formation.script import Model
from tests.llm_server import ScriptedLLM
from tests.security.harness import new_token, tokens_text

CASE_TENANTS = 52


@dataclass
class Server:
    app: App
    grpc_target: str
    http_base: str
    tokens: dict[str, str]  # tenant -> token
    channel: grpc.aio.Channel
    http: httpx.AsyncClient

    def bearer(self, tenant: str) -> dict[str, str]:
        return {"authorization": f"Bearer {self.tokens[tenant]}"}


@pytest.fixture(scope="module")
async def server(tmp_path_factory):
    tenants = ["acme", *(f"{side}{i}" for i in range(CASE_TENANTS) for side in ("grpc", "http"))]
    tokens = {tenant: new_token() for tenant in tenants}
    llm = ScriptedLLM(Model()).__enter__()  # memory formation's model (FormationService's cases)
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path_factory.mktemp("http"),
        tokens=tokens_text(tokens),
        log_level="warning",
        llm_url=llm.url,
        llm_model=llm.model,
    )
    app = await start(config)
    assert app.http_port, "HTTP is on by default"
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{app.http_port}", timeout=30) as http:
        yield Server(app, f"127.0.0.1:{app.port}", f"http://127.0.0.1:{app.http_port}", tokens, channel, http)
    await channel.close()
    await app.stop(0)
    llm.close()


@pytest.fixture
def session_id() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"
