"""Servers of the lifecycle suites: in-process memoryd (gRPC) on each message backend, with
the embedded vector store (Qdrant Edge), each on its own data."""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import replace

import grpc
import pytest

from memoryd.app import start
from memoryd.config import Config
from tests.conftest import BACKENDS, mongo_uri_for
from tests.lifecycle.api import Stubs


@pytest.fixture
def serve(request, tmp_path):
    """`async with serve(backend, **settings) as (app, stubs)`: a fresh server on its own data."""

    @contextlib.asynccontextmanager
    async def running(backend: str, config: Config | None = None, **settings):
        if config is None:
            mongodb_uri = "" if backend == "sqlite" else mongo_uri_for(backend, request)
            config = Config(
                listen="127.0.0.1:0",
                http_listen="off",
                data_dir=tmp_path / f"data-{uuid.uuid4().hex[:8]}",
                mongodb_uri=mongodb_uri,
                mongodb_database=f"memoryd_lifecycle_{uuid.uuid4().hex[:8]}",
                qdrant_timeout_seconds=30.0,  # a loaded machine: creating a shard can take seconds
            )
        app = await start(replace(config, **settings))
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
        try:
            yield app, Stubs.on(channel)
        finally:
            await channel.close()
            await app.stop(0)

    return running


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param
