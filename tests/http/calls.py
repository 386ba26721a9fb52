"""Calling any memoryd RPC by its full name over gRPC (generic stubs) or HTTP/JSON (Connect)."""

from __future__ import annotations

import base64
import functools
import json
from typing import Any

import grpc
from google.protobuf import descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.rpc import error_details_pb2, status_pb2
from openapi_schema_validator import OAS31Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

import memoryd.app
from memoryd.transport.http.site import openapi_document

POOL = descriptor_pool.Default()
# protoc-gen-connect-openapi v0.25.6 (tools/go.mod) puts `additionalProperties: false` next to
# the allOf/oneOf it describes a oneof with, which refuses every field: these schemas match
# no message. Fixed upstream in v0.26.0, which the Go module proxy here does not serve;
# tests/http/test_site.py fails once a fixed version is pinned, so that this list goes too.
ONEOF_SCHEMAS_GENERATED_WRONG = frozenset({
    "memoryd.v1.DeleteVectorsRequest", "memoryd.v1.Event", "memoryd.v1.PublishEventRequest", "memoryd.v1.WatchResponse",
})
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
    """ProtoJSON as the HTTP port answers it: proto field names."""
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


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


@functools.cache
def _openapi_registry() -> Registry:
    return Registry().with_resource("urn:memoryd-openapi", DRAFT202012.create_resource(json.loads(openapi_document())))


def openapi_describes(message: Any) -> bool:
    """Whether the served schema of `message` (a descriptor) and of every message in it is right."""
    seen, pending = set(), [message]
    while pending:
        current = pending.pop()
        if current.full_name in ONEOF_SCHEMAS_GENERATED_WRONG:
            return False
        seen.add(current.full_name)
        pending += [f.message_type for f in current.fields if f.message_type and f.message_type.full_name not in seen]
    return True


def openapi_errors(message_type: str, instance: Any) -> list[str]:
    """Why `instance` does not match the served OpenAPI's schema of `message_type` (none: it does)."""
    schema = {"$ref": f"urn:memoryd-openapi#/components/schemas/{message_type}"}
    return [error.message for error in OAS31Validator(schema, registry=_openapi_registry()).iter_errors(instance)]
