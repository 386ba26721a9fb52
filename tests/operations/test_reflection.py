"""Server reflection answers as grpc.reflection.v1 and as v1alpha (grpcurl asks v1 first; ghz, Postman v1alpha)."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from memoryd.app import SERVICE_NAMES, start
from memoryd.config import Config

VERSIONS = ["grpc.reflection.v1", "grpc.reflection.v1alpha"]


@pytest.fixture(scope="module")
async def target(tmp_path_factory):
    app = await start(Config(listen="127.0.0.1:0", data_dir=tmp_path_factory.mktemp("reflection"), http_listen="off"))
    yield f"127.0.0.1:{app.port}"
    await app.stop(0)


def _classes(package: str):
    pool = descriptor_pool.Default()  # v1's messages are there once the server serves reflection
    request = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.ServerReflectionRequest"))
    response = message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.ServerReflectionResponse"))
    return request, response


async def _ask(target: str, package: str, **request_fields):
    request_class, response_class = _classes(package)
    async with grpc.aio.insecure_channel(target) as channel:
        call = channel.stream_stream(
            f"/{package}.ServerReflection/ServerReflectionInfo",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=response_class.FromString,
        )(iter([request_class(**request_fields)]))
        return [response async for response in call]


@pytest.mark.parametrize("package", VERSIONS)
async def test_lists_every_service_and_both_reflection_versions(target, package):
    (response,) = await _ask(target, package, list_services="")
    names = {service.name for service in response.list_services_response.service}
    assert set(SERVICE_NAMES) <= names
    assert {"grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} <= names


@pytest.mark.parametrize("package", VERSIONS)
async def test_resolves_method_symbols_to_their_file(target, package):
    (response,) = await _ask(target, package, file_containing_symbol="memoryd.v1.MemoryService.GetHistory")
    files = [descriptor_pb2.FileDescriptorProto.FromString(raw) for raw in response.file_descriptor_response.file_descriptor_proto]
    assert "memoryd/v1/memory_service.proto" in {f.name for f in files}


@pytest.mark.parametrize("package", VERSIONS)
async def test_describes_the_v1_reflection_service_itself(target, package):
    (response,) = await _ask(target, package, file_containing_symbol="grpc.reflection.v1.ServerReflection")
    (file,) = [descriptor_pb2.FileDescriptorProto.FromString(raw) for raw in response.file_descriptor_response.file_descriptor_proto]
    assert (file.name, file.package) == ("grpc/reflection/v1/reflection.proto", "grpc.reflection.v1")
    (method,) = file.service[0].method
    assert (method.input_type, method.output_type) == (
        ".grpc.reflection.v1.ServerReflectionRequest",
        ".grpc.reflection.v1.ServerReflectionResponse",
    )


async def test_unknown_symbols_answer_not_found(target):
    (response,) = await _ask(target, "grpc.reflection.v1", file_containing_symbol="memoryd.v1.NoSuchService")
    assert response.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
