"""A client generated from the served OpenAPI document works: openapi-python-client (the test
extra) generates every operation from GET /openapi.json, and the generated code saves a
message, searches memory and parses an error answer (transport/http/openapi.py says what the
served document changes for generators)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

from tests import processes
from tests.http.calls import methods, path

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "memoryd_openapi_generated"


def _mixed_enums(node: object) -> list[list[object]]:
    if isinstance(node, dict):
        enum = node.get("enum")
        found = [enum] if isinstance(enum, list) and len({type(v) for v in enum}) > 1 else []
        return found + [e for value in node.values() for e in _mixed_enums(value)]
    if isinstance(node, list):
        return [e for value in node for e in _mixed_enums(value)]
    return []


async def test_the_served_document_names_this_server_and_suits_generators(server):
    document = (await server.http.get("/openapi.json")).json()
    assert [s["url"] for s in document["servers"]] == [server.http_base]
    assert _mixed_enums(document) == []
    schemas = document["components"]["schemas"]
    assert schemas["google.protobuf.ListValue"]["type"] == "array"
    assert "binary" not in json.dumps(document)
    assert schemas["connect.error_details.Any"]["properties"]["value"]["contentEncoding"] == "base64"
    assert not any("oneOf" in s or "allOf" in s for s in schemas.values())


@pytest.fixture(scope="module")
async def generated(server, tmp_path_factory):
    """The package openapi-python-client generates from the served document, importable."""
    root = tmp_path_factory.mktemp("openapi-client")
    document = root / "openapi.json"
    document.write_bytes((await server.http.get("/openapi.json")).content)
    result = processes.run(
        [str(GENERATOR), "generate", "--path", str(document), "--output-path", str(root / PACKAGE), "--meta", "none"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module(PACKAGE), result.stdout + result.stderr
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def test_every_unary_operation_is_generated(generated):
    package, output = generated
    api = Path(package.__file__).parent / "api"
    operations = {p.stem for p in api.rglob("*.py") if p.stem != "__init__"}
    def snake(name: str) -> str:
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")

    for rpc in methods(streaming=False):
        operation = f"memoryd_v_1_{snake(rpc.containing_service.name)}_{snake(rpc.name)}"
        assert operation in operations, (path(rpc), output)
    assert "Endpoint will not be generated" not in output.replace("memoryd.v1.EventService/Watch", "")


async def test_the_generated_client_saves_searches_and_reads_errors(server, generated, session_id):
    package, _ = generated
    from importlib import import_module

    memory = f"{PACKAGE}.api.memoryd_v_1_memory_service"
    save = import_module(f"{memory}.memoryd_v_1_memory_service_save_message")
    history = import_module(f"{memory}.memoryd_v_1_memory_service_get_history")
    search = import_module(f"{PACKAGE}.api.memoryd_v_1_vector_service.memoryd_v_1_vector_service_search_memory")
    models = import_module(f"{PACKAGE}.models")
    version = models.ConnectProtocolVersion.VALUE_1
    client = package.AuthenticatedClient(base_url=server.http_base, token=server.tokens["acme"])

    request = models.SaveMessageRequest.from_dict(
        {"session_id": session_id, "message": {"role": "user", "content": "the generated client saved this about tea"}}
    )
    saved = await save.asyncio(client=client, body=request, connect_protocol_version=version)
    assert isinstance(saved, models.SaveMessageResponse), saved
    assert saved.message.content == "the generated client saved this about tea" and int(saved.message.seq) == 1

    read = await history.asyncio(
        client=client, body=models.GetHistoryRequest(session_id=session_id), connect_protocol_version=version
    )
    assert [m.content for m in read.messages] == ["the generated client saved this about tea"]

    found = await search.asyncio(
        client=client,
        body=models.SearchMemoryRequest.from_dict({"query": "tea", "session_ids": [session_id], "limit": 5}),
        connect_protocol_version=version,
    )
    # Without an embedder the server answers FAILED_PRECONDITION for a query text, or hits by
    # keyword: either way the generated code parses the answer into its model.
    assert isinstance(found, (models.SearchMemoryResponse, models.ConnectError)), found

    refused = await save.asyncio_detailed(
        client=client,
        body=models.SaveMessageRequest.from_dict({"session_id": "", "message": {"role": "user", "content": "x"}}),
        connect_protocol_version=version,
    )
    assert refused.status_code == 400
    error = refused.parsed
    assert isinstance(error, models.ConnectError) and error.code.value == "invalid_argument"
    details = {d.type_: d for d in error.details}
    assert "google.rpc.BadRequest" in details and details["google.rpc.BadRequest"].value  # base64 text
