"""The HTTP port's own GETs: /openapi.json describes every RPC at its Connect path with its
messages' proto3 JSON fields (that it matches the .proto is scripts/check-contract's gate);
/healthz follows gRPC health."""

from __future__ import annotations

import json

from memoryd.transport.http.site import openapi_document
from tests.http.calls import methods, path


def _definition(document: dict, ref: str) -> dict:
    assert ref.startswith("#/definitions/"), ref
    return document["definitions"][ref.removeprefix("#/definitions/")]


def _refs(value):
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "$ref":
                yield item
            else:
                yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)


async def test_served_document_is_the_generated_one(server):
    response = await server.http.get("/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.content == openapi_document()
    assert response.json()["swagger"] == "2.0"


def test_every_rpc_is_described_at_its_connect_path_with_its_messages():
    document = json.loads(openapi_document())
    rpcs = methods(streaming=False) + methods(streaming=True)
    assert set(document["paths"]) == {path(rpc) for rpc in rpcs}
    for rpc in rpcs:
        operation = document["paths"][path(rpc)]["post"]
        (body,) = [p for p in operation["parameters"] if p["in"] == "body"]
        request = _definition(document, body["schema"]["$ref"])
        response = _definition(document, operation["responses"]["200"]["schema"]["$ref"])
        for message, schema in ((rpc.input_type, request), (rpc.output_type, response)):
            assert set(schema.get("properties", {})) == {f.json_name for f in message.fields}, message.full_name
        if rpc.server_streaming:
            assert operation["produces"] == ["application/connect+json"]
        else:
            assert operation["responses"]["default"]["schema"]["$ref"] == "#/definitions/connectError"


def test_every_reference_resolves():
    document = json.loads(openapi_document())
    for ref in _refs(document):
        _definition(document, ref)


async def test_healthz_follows_grpc_health(server):
    response = await server.http.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "SERVING"})
    await server.app.health.set("", 2)  # NOT_SERVING, as while storage is down
    try:
        response = await server.http.get("/healthz")
        assert (response.status_code, response.json()) == (503, {"status": "NOT_SERVING"})
    finally:
        await server.app.health.set("", 1)
