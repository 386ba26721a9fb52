"""memoryd's RPCs over the Connect protocol (connectrpc), bound to the gRPC servicers.

Every method of every service handed in is served at `POST /<package>.<Service>/<Method>`
(Connect's URL layout; JSON or binary protobuf, HTTP/1.1 or HTTP/2). The endpoints are
built from the same service descriptors gRPC registers, so no RPC can be left out, and
each calls the servicer method's own undecorated body through transport/rpc.py's core
(tenant, deadline budget, failure statuses): authentication, validation, limits and error
details are those of gRPC, written once. Connect's generated server stubs are not used:
they define snake_case methods our gRPC-style servicers do not have.

Bodies are binary protobuf (decoded as gRPC decodes them) or ProtoJSON (protojson.py:
strict, answers in proto field names). An error's google.rpc details travel as Connect
says, type and protobuf bytes, with their JSON next to them ("debug") in the same
field names as every other answer.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import grpc
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.rpc import error_details_pb2, status_pb2  # noqa: F401 - registers the google.rpc details
from protobuf import message_from_json_value
from protobuf.wkt import Any as ConnectAny
from protobuf.wkt import Struct

from memoryd.domain.errors import MemorydError
from memoryd.transport import rpc
from memoryd.transport.http import protojson

STATUS_DETAILS_KEY = "grpc-status-details-bin"

# Connect's codes are gRPC's, in snake_case; only CANCELLED is spelt differently.
_CODES = {status: Code[status.name] for status in grpc.StatusCode if status.name in Code.__members__}
_CODES[grpc.StatusCode.CANCELLED] = Code.CANCELED

_IDEMPOTENCY = {
    descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS: IdempotencyLevel.NO_SIDE_EFFECTS,
    descriptor_pb2.MethodOptions.IDEMPOTENT: IdempotencyLevel.IDEMPOTENT,
}


class CallContext:
    """What the servicers and rpc.py ask of a grpc.aio context, answered for a Connect call."""

    __slots__ = ("_request",)

    def __init__(self, request: RequestContext) -> None:
        self._request = request

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._request.request_headers.allitems())  # names are lower-case, as in gRPC

    def time_remaining(self) -> float | None:
        remaining_ms = self._request.timeout_ms  # from the connect-timeout-ms header
        return None if remaining_ms is None else max(remaining_ms / 1000, 0.0)

    async def send_initial_metadata(self, metadata: Any) -> None:
        """Connect sends a stream's headers with its first message (Watch's first is a progress)."""


class _Detail(ErrorDetail):
    """A google.rpc detail: its type and protobuf bytes, and as its "debug" JSON (which
    connectrpc takes from value()) the message with its proto field names, as every answer."""

    def __init__(self, packed: Any) -> None:
        super().__init__(ConnectAny(type_url=packed.type_url, value=packed.value))
        self._debug = None
        try:
            descriptor = descriptor_pool.Default().FindMessageTypeByName(self.type_name)
        except KeyError:
            return  # not a type this process knows: bytes only
        message = message_factory.GetMessageClass(descriptor).FromString(packed.value)
        self._debug = message_from_json_value(
            Struct, json_format.MessageToDict(message, preserving_proto_field_name=True)
        )

    def value(self, *args: Any) -> Any:
        return super().value(*args) if args else self._debug


def connect_error(status: grpc.Status) -> ConnectError:
    """The Connect error of a gRPC status: same code, message and google.rpc details."""
    rich = status_pb2.Status()
    for key, value in status.trailing_metadata or ():
        if key == STATUS_DETAILS_KEY:
            rich.ParseFromString(value)
    details = [_Detail(packed) for packed in rich.details]
    return ConnectError(_CODES.get(status.code, Code.UNKNOWN), rich.message or status.details or "", details)


class _Codec:
    """A connectrpc codec whose refusals answer as gRPC's do: INVALID_ARGUMENT with details."""

    def __init__(self, name: str, encode: Callable[[Any], bytes], decode: Callable[[bytes, type], Any]) -> None:
        self._name, self._encode, self._decode = name, encode, decode

    def name(self) -> str:
        return self._name

    def encode(self, message: Any) -> bytes:
        return self._encode(message)

    def decode(self, data: bytes | bytearray, message_class: type) -> Any:
        try:
            return self._decode(bytes(data), message_class)
        except MemorydError as error:
            raise connect_error(rpc.failure_status("http_request_body", error)) from None


CODECS = [
    _Codec(
        "proto",
        lambda message: message.SerializeToString(),
        lambda data, message_class: rpc.decode(message_class, data),
    ),
    _Codec("json", protojson.render, protojson.parse),
]


async def _unary(core, servicer, method: MethodDescriptor, request: Any, context: RequestContext) -> Any:
    def body(servicer, request, context):
        return rpc.confined_call(core, servicer, request, context, method.full_name)

    try:
        return await rpc.call_unary(body, servicer, request, CallContext(context), method.full_name)
    except Exception as error:  # noqa: BLE001 - every failure leaves as a Connect error
        raise connect_error(rpc.failure_status(method.name, error)) from None


async def _server_stream(
    core, servicer, method: MethodDescriptor, request: Any, context: RequestContext
) -> AsyncIterator[Any]:
    def body(servicer, request, context):
        return rpc.confined_stream(core, servicer, request, context, method.full_name)

    try:
        async for item in rpc.stream_items(body, servicer, request, CallContext(context), method.full_name):
            yield item
    except Exception as error:  # noqa: BLE001
        raise connect_error(rpc.failure_status(method.name, error)) from None


def _method_info(method: MethodDescriptor) -> MethodInfo:
    return MethodInfo(
        name=method.name,
        service_name=method.containing_service.full_name,
        input=message_factory.GetMessageClass(method.input_type),
        output=message_factory.GetMessageClass(method.output_type),
        idempotency_level=_IDEMPOTENCY.get(method.GetOptions().idempotency_level, IdempotencyLevel.UNKNOWN),
        stream_type=StreamType.SERVER_STREAM if method.server_streaming else StreamType.UNARY,
    )


def endpoints(servicers: Mapping[str, Any]) -> dict[str, Endpoint]:
    """`/<service>/<method>` -> endpoint, for every method of every (full service name -> servicer)."""
    pool = descriptor_pool.Default()
    routes: dict[str, Endpoint] = {}
    for service_name, servicer in servicers.items():
        for method in pool.FindServiceByName(service_name).methods:
            if method.client_streaming:
                raise NotImplementedError(f"{method.full_name}: client streaming has no HTTP binding here")
            handler = getattr(type(servicer), method.name)
            core = getattr(handler, "__wrapped__", None)  # the body under rpc.unary / rpc.server_stream
            if core is None:
                raise TypeError(
                    f"{type(servicer).__name__}.{method.name} must be wrapped by rpc.unary or rpc.server_stream"
                )
            info = _method_info(method)
            path = f"/{service_name}/{method.name}"
            if method.server_streaming:
                routes[path] = Endpoint.server_stream(info, functools.partial(_server_stream, core, servicer, method))
            else:
                routes[path] = Endpoint.unary(info, functools.partial(_unary, core, servicer, method))
    return routes


class ConnectApp(ConnectASGIApplication):
    """One ASGI application serving every memoryd service over Connect."""

    def __init__(self, servicers: Mapping[str, Any], *, read_max_bytes: int, interceptors: Sequence[Any] = ()) -> None:
        routes = endpoints(servicers)
        super().__init__(
            service=routes,
            endpoints=lambda resolved: resolved,
            interceptors=interceptors,
            read_max_bytes=read_max_bytes,  # larger bodies answer RESOURCE_EXHAUSTED, as over gRPC
            codecs=CODECS,
        )
        self.routes = routes

    @property
    def path(self) -> str:
        return "/"
