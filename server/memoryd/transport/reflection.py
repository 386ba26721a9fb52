"""Server reflection as grpc.reflection.v1 and v1alpha, resolving method names too.

grpcio-reflection implements only v1alpha (grpc/grpc issue 38576). The v1 protocol is the
same messages, field for field, under another package, so one servicer answers both: the
v1 service decodes and encodes with the v1alpha classes (identical bytes on the wire), and
the v1 file descriptor, derived from v1alpha's by renaming the package, is added to the
pool so that clients can describe it. grpcurl asks v1 first and falls back to v1alpha.

protobuf's upb descriptor pool cannot find a file by a method's full name
(`memoryd.v1.MemoryService.GetHistory` raises KeyError), while ghz asks for exactly
that symbol. MethodResolvingPool answers such a lookup with the file of the method's service.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

from memoryd.transport.rpc import GenericOnly

V1ALPHA_SERVICE_NAME = reflection.SERVICE_NAME
V1_PACKAGE = "grpc.reflection.v1"
V1_SERVICE_NAME = f"{V1_PACKAGE}.ServerReflection"
V1_FILE = "grpc/reflection/v1/reflection.proto"


class MethodResolvingPool:
    """A descriptor pool that also resolves `package.Service.Method` symbols."""

    def __init__(self, pool: descriptor_pool.DescriptorPool | None = None) -> None:
        self._pool = pool or descriptor_pool.Default()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)

    def FindFileContainingSymbol(self, symbol: str) -> Any:  # noqa: N802 - protobuf's name
        try:
            return self._pool.FindFileContainingSymbol(symbol)
        except KeyError:
            service_name, _, method_name = symbol.rpartition(".")
            try:
                service = self._pool.FindServiceByName(service_name)
            except KeyError:
                service = None
            if service is None or method_name not in service.methods_by_name:
                raise
            return service.file


def _v1_file() -> descriptor_pb2.FileDescriptorProto:
    """v1alpha's reflection.proto with its package (and the type names that carry it) renamed to v1."""
    old, new = f".{reflection_pb2.DESCRIPTOR.package}.", f".{V1_PACKAGE}."
    file = descriptor_pb2.FileDescriptorProto.FromString(reflection_pb2.DESCRIPTOR.serialized_pb)
    file.name, file.package = V1_FILE, V1_PACKAGE
    file.ClearField("options")  # v1alpha's language packages and deprecation are not v1's

    def rename(type_name: str) -> str:
        return new + type_name[len(old) :] if type_name.startswith(old) else type_name

    def rename_fields(messages: Iterable[descriptor_pb2.DescriptorProto]) -> None:
        for message in messages:
            for field in message.field:
                if field.HasField("type_name"):  # a proto2 field: assigning "" would set it
                    field.type_name = rename(field.type_name)
            rename_fields(message.nested_type)

    rename_fields(file.message_type)
    for service in file.service:
        for method in service.method:
            method.input_type, method.output_type = rename(method.input_type), rename(method.output_type)
    return file


def _add_v1_descriptor(pool: descriptor_pool.DescriptorPool) -> None:
    try:
        pool.FindFileByName(V1_FILE)
    except KeyError:
        pool.AddSerializedFile(_v1_file().SerializeToString())


def enable_reflection(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Serve reflection, v1 and v1alpha, listing `service_names` and both reflection services."""
    pool = descriptor_pool.Default()
    _add_v1_descriptor(pool)
    names = (*service_names, V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
    servicer = reflection.aio.ReflectionServicer(names, pool=MethodResolvingPool(pool))
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, GenericOnly(server))
    v1 = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": v1}),)
    )
