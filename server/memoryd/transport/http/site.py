"""The ASGI application on the HTTP port: the Connect endpoints and the contract's description.

    POST /<package>.<Service>/<Method>   every RPC (transport/http/connect.py)
    GET  /openapi.json                   OpenAPI (Swagger 2.0) description of those endpoints,
                                         generated from the proto by scripts/gen-proto
    GET  /healthz                        200 while gRPC health says SERVING, else 503 (for
                                         load balancers and probes that speak only HTTP)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from grpc_health.v1 import health_pb2

from memoryd.domain.limits import Limits
from memoryd.transport.http.connect import ConnectApp

OPENAPI_PATH = "/openapi.json"
HEALTH_PATH = "/healthz"
_JSON = (b"content-type", b"application/json")


class _NoSuchService:
    """The context grpc_health's Check needs: it aborts when a service has no status yet."""

    async def abort(self, code: Any, details: str = "") -> None:
        raise LookupError(code)


async def overall_health(health: Any) -> str:
    """The status name of the server as a whole ("" service) in a grpc_health HealthServicer."""
    try:
        response = await health.Check(health_pb2.HealthCheckRequest(service=""), _NoSuchService())
    except LookupError:
        return "UNKNOWN"  # still starting
    return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)


def openapi_document() -> bytes:
    return resources.files("memoryd.transport.http").joinpath("openapi.json").read_bytes()


class Site:
    """Answers GET /openapi.json and /healthz itself and hands every other request to the Connect app."""

    def __init__(self, connect: Any, openapi: bytes, health: Any) -> None:
        self._connect = connect
        self._openapi = openapi
        self._health = health

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            if scope["path"] == OPENAPI_PATH:
                await _respond(send, scope, 200, self._openapi)
                return
            if scope["path"] == HEALTH_PATH:
                status = await overall_health(self._health)
                await _respond(send, scope, 200 if status == "SERVING" else 503, json.dumps({"status": status}).encode())
                return
        await self._connect(scope, receive, send)


async def _respond(send: Any, scope: dict, status: int, body: bytes) -> None:
    headers = [_JSON, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body if scope["method"] == "GET" else b""})


def build(
    servicers: Mapping[str, Any], limits: Limits, health: Any, *, metrics: bool = False, tracing: bool = False
) -> Any:
    interceptors = []
    if metrics:
        from memoryd.observability.metrics import ConnectMetricsInterceptor

        interceptors.append(ConnectMetricsInterceptor())
    connect = ConnectApp(servicers, read_max_bytes=limits.max_request_bytes, interceptors=interceptors)
    app: Any = Site(connect, openapi_document(), health)
    if tracing:
        from memoryd.observability.tracing import traced_asgi

        app = traced_asgi(app)
    return app
