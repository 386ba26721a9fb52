"""A real memoryd gRPC server on an ephemeral port, per storage backend, with generated stubs."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import grpc
import pytest

from memoryd.v1 import event_service_pb2_grpc, memory_service_pb2_grpc, metadata_service_pb2_grpc
from memoryd.app import start
from memoryd.config import Config
from tests.conftest import BACKENDS, mongo_uri_for


@dataclass
class Client:
    memory: memory_service_pb2_grpc.MemoryServiceStub
    metadata: metadata_service_pb2_grpc.MetadataServiceStub
    events: event_service_pb2_grpc.EventServiceStub
    channel: grpc.aio.Channel
    app: object


# Package scope: closed once the e2e tests are done, not kept open to the end of the session.
@pytest.fixture(scope="package", params=BACKENDS)
async def client(request, tmp_path_factory):
    mongodb_uri = "" if request.param == "sqlite" else mongo_uri_for(request.param, request)
    config = Config(
        listen="127.0.0.1:0",
        data_dir=tmp_path_factory.mktemp("e2e"),
        mongodb_uri=mongodb_uri,
        mongodb_database=f"memoryd_e2e_{uuid.uuid4().hex[:8]}",
    )
    app = await start(config)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    yield Client(
        memory_service_pb2_grpc.MemoryServiceStub(channel),
        metadata_service_pb2_grpc.MetadataServiceStub(channel),
        event_service_pb2_grpc.EventServiceStub(channel),
        channel,
        app,
    )
    await channel.close()
    await app.stop(0)


@pytest.fixture
def session_id() -> str:
    # Without authentication every caller is the default tenant; unique sessions keep tests apart.
    return f"s-{uuid.uuid4().hex[:12]}"
