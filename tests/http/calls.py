"""Calling any memoryd RPC by its full name over gRPC (generic stubs) or HTTP/JSON (Connect)."""

from __future__ import annotations

import base64
from typing import Any

import grpc
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.rpc import error_details_pb2, status_pb2

import memoryd.app

POOL = descriptor_pool.Default()
DETAIL_TYPES = {
    "google.rpc.ErrorInfo": error_details_pb2.ErrorInfo,
    "google.rpc.BadRequest": error_details_pb2.BadRequest,
    "google.rpc.RetryInfo": error_details_pb2.RetryInfo,
}


def methods(*, streaming: bool) -> list[MethodDescriptor]:
    """Every method of every memoryd service, from the descriptors (a new RPC is never missed)."""
    return [
        method
        for name in memoryd.app.SERVICE_NAMES
        for method in POOL.FindServiceByName(name).methods
        if method.server_streaming == streaming
    ]


def method(full_name: str) -> MethodDescriptor:
    return POOL.FindMethodByName(full_name)


def request_of(method: MethodDescriptor, body: dict) -> Any:
    return json_format.ParseDict(body, message_factory.GetMessageClass(method.input_type)())


def to_json(message: Any) -> dict:
    return json_format.MessageToDict(message)


def path(method: MethodDescriptor) -> str:
    return f"/{method.containing_service.full_name}/{method.name}"


async def grpc_call(channel: grpc.aio.Channel, method: MethodDescriptor, body: dict, metadata=()) -> Any:
    stub = channel.unary_unary(
        path(method),
        request_serializer=lambda m: m.SerializeToString(),
        response_deserializer=message_factory.GetMessageClass(method.output_type).FromString,
    )
    return await stub(request_of(method, body), metadata=tuple(metadata.items()) if isinstance(metadata, dict) else metadata, timeout=30)


def grpc_error(error: grpc.aio.AioRpcError) -> dict:
    """code, message and google.rpc details of a failed gRPC call, in Connect's spelling."""
    rich = status_pb2.Status()
    for key, value in error.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            rich.ParseFromString(value)
    code = error.code().name.lower()
    return {
        "code": "canceled" if code == "cancelled" else code,
        "message": rich.message or error.details(),
        "details": [_detail(any_.type_url.rpartition("/")[2], any_.value) for any_ in rich.details],
    }


def http_error(body: dict) -> dict:
    """The same of a Connect error body; details decoded from their base64 protobuf values,
    whose JSON form the body also carries (Connect's "debug"), for readers without protobuf."""
    details = []
    for detail in body.get("details", []):
        decoded = _detail(detail["type"], base64.b64decode(detail["value"] + "=="))
        assert {"type": detail["type"], **detail["debug"]} == decoded, detail
        details.append(decoded)
    return {"code": body["code"], "message": body.get("message", ""), "details": details}


def _detail(type_name: str, value: bytes) -> dict:
    return {"type": type_name, **to_json(DETAIL_TYPES[type_name].FromString(value))}
