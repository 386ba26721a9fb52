"""The ASGI application on the HTTP port: the Connect endpoints and the contract's description.

POST /<package>.<Service>/<Method>   every RPC (transport/http/connect.py); a body of a
                                     content type it does not read answers 415 with a
                                     JSON body naming the ones it does
GET  /openapi.json                   OpenAPI 3.1 description of those endpoints,
                                     generated from the proto by scripts/gen-proto and
                                     made readable to client generators (openapi.py),
                                     `servers` naming the address it was fetched from
GET  /healthz                        200 while gRPC health says SERVING, else 503 (for
                                     load balancers and probes that speak only HTTP)
GET  /console/...                    the web console (docs/CONSOLE.md): static files
                                     shipped in this package (console/), unless
                                     --console false; they call the endpoints above
                                     with the user's own token, like any client
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any

from connectrpc.method import StreamType
from grpc_health.v1 import health_pb2

from memoryd.domain.limits import Limits
from memoryd.transport.http import openapi
from memoryd.transport.http.connect import ConnectApp

OPENAPI_PATH = "/openapi.json"
HEALTH_PATH = "/healthz"
CONSOLE_PATH = "/console/"
_CONSOLE_TYPES = {
    ".html": b"text/html; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
    ".svg": b"image/svg+xml",
}
# The console's pages load only their own files and call only this server; images are the
# data: URIs messages carry (a remote image URL is shown as text, never fetched).
_CONSOLE_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-cache"),
]
_JSON = (b"content-type", b"application/json")
# What connectrpc reads on this port: Connect, and gRPC-Web (which needs no HTTP trailers).
GRPC_WEB_CONTENT_TYPES = ("application/grpc-web", "application/grpc-web+proto", "application/grpc-web+json")
UNARY_CONTENT_TYPES = ("application/json", "application/proto", *GRPC_WEB_CONTENT_TYPES)
STREAM_CONTENT_TYPES = ("application/connect+json", "application/connect+proto", *GRPC_WEB_CONTENT_TYPES)


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

    def __init__(self, connect: Any, document: bytes, health: Any, *, console: bool = False) -> None:
        self._connect = connect
        self._openapi = openapi.for_generators(json.loads(document))
        self._health = health
        self._console = console_files() if console else {}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
            if scope["path"] == OPENAPI_PATH:
                document = openapi.with_server(self._openapi, openapi.request_url(scope))
                await _respond(send, scope, 200, document)
                return
            if scope["path"] == HEALTH_PATH:
                status = await overall_health(self._health)
                await _respond(
                    send, scope, 200 if status == "SERVING" else 503, json.dumps({"status": status}).encode()
                )
                return
            if self._console and scope["path"] in ("/console", *self._console):
                await _console(send, scope, self._console)
                return
        if scope["type"] == "http" and (endpoint := self._connect.routes.get(scope["path"])) is not None:
            accepted = UNARY_CONTENT_TYPES if endpoint.method.stream_type == StreamType.UNARY else STREAM_CONTENT_TYPES
            if _is_grpc(scope):  # gRPC needs HTTP/2 trailers: it is served on the gRPC port
                await _respond(send, scope, 415, unsupported_media_type(accepted))
                return
            send = _explaining_415(send, accepted)
        await self._connect(scope, receive, send)


def _is_grpc(scope: dict) -> bool:
    content_type = next((value for key, value in scope["headers"] if key == b"content-type"), b"")
    media_type = content_type.partition(b";")[0].strip().lower()
    return media_type.startswith(b"application/grpc") and not media_type.startswith(b"application/grpc-web")


def unsupported_media_type(accepted: tuple[str, ...]) -> bytes:
    """The body of a 415: connectrpc answers it with none."""
    return json.dumps(
        {
            "code": "invalid_argument",
            "message": f"Content-Type must be one of {', '.join(accepted)} (gRPC is served on the gRPC port)",
            "accepted_content_types": list(accepted),
        }
    ).encode()


def _explaining_415(send: Any, accepted: tuple[str, ...]) -> Any:
    """`send`, with connectrpc's empty 415 answer given a body that names the accepted types."""
    replaced = False

    async def explaining(message: dict) -> None:
        nonlocal replaced
        if message["type"] == "http.response.start" and message["status"] == 415:
            replaced = True
            body = unsupported_media_type(accepted)
            headers = [
                (k, v) for k, v in message.get("headers", ()) if k.lower() not in (b"content-type", b"content-length")
            ]
            await send({**message, "headers": [*headers, _JSON, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
        elif not replaced:
            await send(message)

    return explaining


def console_files() -> dict[str, tuple[bytes, bytes]]:
    """/console/<name> -> (content type, bytes) for every file the package ships in console/,
    read once; "/console/" is index.html."""
    files: dict[str, tuple[bytes, bytes]] = {}

    def walk(folder: Any, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif (kind := _CONSOLE_TYPES.get(entry.name[entry.name.rfind(".") :])) is not None:
                files[f"{CONSOLE_PATH}{prefix}{entry.name}"] = (kind, entry.read_bytes())

    walk(resources.files("memoryd.transport.http").joinpath("console"), "")
    files[CONSOLE_PATH] = files[f"{CONSOLE_PATH}index.html"]
    return files


async def _console(send: Any, scope: dict, files: dict[str, tuple[bytes, bytes]]) -> None:
    if scope["path"] == "/console":
        headers = [(b"location", CONSOLE_PATH.encode()), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 308, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return
    kind, body = files[scope["path"]]
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()), *_CONSOLE_HEADERS]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


async def _respond(send: Any, scope: dict, status: int, body: bytes) -> None:
    headers = [_JSON, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def build(
    servicers: Mapping[str, Any],
    limits: Limits,
    health: Any,
    *,
    metrics: bool = False,
    tracing: bool = False,
    console: bool = False,
) -> Any:
    interceptors = []
    if metrics:
        from memoryd.observability.metrics import ConnectMetricsInterceptor

        interceptors.append(ConnectMetricsInterceptor())
    connect = ConnectApp(servicers, read_max_bytes=limits.max_request_bytes, interceptors=interceptors)
    app: Any = Site(connect, openapi_document(), health, console=console)
    if tracing:
        from memoryd.observability.tracing import traced_asgi

        app = traced_asgi(app)
    return app
