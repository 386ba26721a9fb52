"""Fixtures of the security suite: a token-authenticated memoryd with three tenants."""

from __future__ import annotations

import grpc
import pytest

from memoryd.domain.limits import Limits
from tests.security.harness import Caller, new_token, start_app

TENANTS = ("acme", "globex", "initech")

# Small limits so over-limit inputs stay small on the wire.
CORPUS_LIMITS = Limits(
    max_id_length=64,
    max_content_bytes=1024,
    max_message_bytes=4096,
    max_metadata_bytes=1024,
    max_batch_messages=5,
    max_delete_items=10,
    max_page_size=100,
    max_recent_limit=100,
    max_filter_items=4,
    max_text_bytes=64,
    max_request_bytes=64 << 10,
    max_vector_dimension=8,
)


@pytest.fixture(scope="module")
def tokens() -> dict[str, str]:
    return {tenant: new_token() for tenant in TENANTS}


@pytest.fixture(scope="module")
async def secured(tmp_path_factory, tokens):
    app = await start_app(tmp_path_factory.mktemp("secured"), tokens, limits=CORPUS_LIMITS)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    yield app, channel
    await channel.close()
    await app.stop(0)


@pytest.fixture(scope="module")
def callers(secured, tokens) -> dict[str, Caller]:
    _, channel = secured
    return {tenant: Caller(channel, token, tenant) for tenant, token in tokens.items()}
