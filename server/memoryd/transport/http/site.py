"""The ASGI application on the HTTP port: the Connect endpoints and the contract's description.

    POST /<package>.<Service>/<Method>   every RPC (transport/http/connect.py)
    GET  /openapi.json                   OpenAPI (Swagger 2.0) description of those endpoints,
                                         generated from the proto by scripts/gen-proto
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

from memoryd.domain.limits import Limits
from memoryd.transport.http.connect import ConnectApp

OPENAPI_PATH = "/openapi.json"


def openapi_document() -> bytes:
    return resources.files("memoryd.transport.http").joinpath("openapi.json").read_bytes()


class Site:
    """Answers GET /openapi.json itself and hands every other request to the Connect app."""

    def __init__(self, connect: Any, openapi: bytes) -> None:
        self._connect = connect
        self._openapi = openapi
        self._headers = [(b"content-type", b"application/json"), (b"content-length", str(len(openapi)).encode())]

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == OPENAPI_PATH and scope["method"] in ("GET", "HEAD"):
            await send({"type": "http.response.start", "status": 200, "headers": self._headers})
            await send({"type": "http.response.body", "body": self._openapi if scope["method"] == "GET" else b""})
            return
        await self._connect(scope, receive, send)


def build(servicers: Mapping[str, Any], limits: Limits, *, metrics: bool = False, tracing: bool = False) -> Any:
    interceptors = []
    if metrics:
        from memoryd.observability.metrics import ConnectMetricsInterceptor

        interceptors.append(ConnectMetricsInterceptor())
    connect = ConnectApp(servicers, read_max_bytes=limits.max_request_bytes, interceptors=interceptors)
    app: Any = Site(connect, openapi_document())
    if tracing:
        from memoryd.observability.tracing import traced_asgi

        app = traced_asgi(app)
    return app
