"""The served OpenAPI document, as client generators read it.

protoc-gen-connect-openapi's output (openapi.json, scripts/gen-proto) is valid OpenAPI 3.1,
but generators (openapi-python-client, openapi-generator) refuse or drop parts of it. The
document served at GET /openapi.json is that output with these changes, each saying what
the wire already does:

- enums list their names only, as strings: the generator lists each value's name and its
  number in one enum (`type: [string, number]`), which generators cannot map to one type;
  the server still accepts numbers (ProtoJSON), and answers with names;
- google.protobuf.Value is any JSON value (`{}`), ListValue a JSON array of them and Struct
  an object of them: the generated Value is a oneOf with a bare `type: array` (no items),
  and ListValue is described as an object with `values` while ProtoJSON writes an array;
- bytes in JSON are base64 text (`format: byte`, `contentEncoding: base64`), not `format:
  binary` (the error details' `value`, google.protobuf.Any's);
- a message with a oneof lists the oneof's fields among its properties, with a sentence
  saying at most one is set: the generator writes a oneof as `oneOf`/`allOf` of inline
  one-property objects (beside `additionalProperties: false`, which refuses every field),
  which generators cannot turn into a model;
- the map entry messages (`...LabelsEntry`), which nothing references (a map is a JSON
  object), are left out: two of them have one name, which generators refuse;
- `servers` is where the document was fetched from (the request's scheme and Host), not
  the default address the generator was given.
"""

from __future__ import annotations

import copy
import json
from typing import Any

_VALUE = "google.protobuf.Value"
_ANY_JSON: dict[str, Any] = {"description": "Any JSON value (google.protobuf.Value in ProtoJSON)."}


def _walk(node: Any) -> None:
    if isinstance(node, dict):
        enum = node.get("enum")
        if (
            isinstance(enum, list)
            and any(isinstance(v, str) for v in enum)
            and any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in enum)
        ):
            node["enum"] = [v for v in enum if isinstance(v, str)]
            node["type"] = "string"
        if node.get("type") == "string" and node.get("format") == "binary":
            node["format"] = "byte"
            node["contentEncoding"] = "base64"
        for value in node.values():
            _walk(value)
    elif isinstance(node, list):
        for value in node:
            _walk(value)


def _flatten_oneofs(schema: dict[str, Any]) -> None:
    """A message schema's oneof parts as plain optional properties (module docstring)."""
    parts = list(schema.pop("allOf", []))
    if "oneOf" in schema:
        parts.append({"oneOf": schema.pop("oneOf")})
    properties = schema.setdefault("properties", {})
    groups: list[list[str]] = []
    for part in parts:
        if "oneOf" in part:
            names: list[str] = []
            for alternative in part["oneOf"]:
                properties.update(alternative.get("properties", {}))
                names += list(alternative.get("properties", {}))
            groups.append(names)
        else:
            properties.update(part.get("properties", {}))
    said = " ".join(f"At most one of {', '.join(names)} is set (a oneof)." for names in groups)
    schema["description"] = f"{schema.get('description', '')} {said}".strip()


def _is_oneof_message(schema: dict[str, Any]) -> bool:
    parts = schema.get("allOf", []) + [{"oneOf": schema["oneOf"]}] if "oneOf" in schema else schema.get("allOf", [])
    return bool(parts) and all(
        isinstance(alternative, dict) and set(alternative.get("properties", {})) and "$ref" not in alternative
        for part in parts
        for alternative in part.get("oneOf", [part])
    )


def for_generators(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of the generated document with the changes of the module docstring (but `servers`)."""
    out = copy.deepcopy(document)
    _walk(out)
    schemas = out.get("components", {}).get("schemas", {})
    for schema in schemas.values():
        if _is_oneof_message(schema):
            _flatten_oneofs(schema)
    text = json.dumps(out)
    entries = [n for n in schemas if n.endswith("Entry") and set(schemas[n].get("properties", {})) == {"key", "value"}]
    for name in entries:
        if f'"#/components/schemas/{name}"' not in text:
            del schemas[name]
    ref = {"$ref": f"#/components/schemas/{_VALUE}"}
    if _VALUE in schemas:
        schemas[_VALUE] = {**_ANY_JSON, "description": schemas[_VALUE].get("description", _ANY_JSON["description"])}
    if "google.protobuf.ListValue" in schemas:
        schemas["google.protobuf.ListValue"] = {
            "type": "array",
            "items": ref,
            "description": "A JSON array (google.protobuf.ListValue in ProtoJSON).",
        }
    if "google.protobuf.Struct" in schemas:
        schemas["google.protobuf.Struct"] = {
            **schemas["google.protobuf.Struct"],
            "type": "object",
            "additionalProperties": ref,
        }
    return out


def with_server(document: dict[str, Any], url: str) -> bytes:
    """The document, serialized, with `servers` naming `url` (the address it was fetched from)."""
    described = (document.get("servers") or [{}])[0].get("description", "")
    server: dict[str, Any] = {"url": url}
    if described:
        server["description"] = "this server (the address this document was fetched from)"
    return json.dumps({**document, "servers": [server]}, ensure_ascii=False).encode()


def request_url(scope: dict[str, Any]) -> str:
    """scheme://host[:port] of an ASGI HTTP request: its Host header, else the listening address."""
    host = next((value.decode("latin-1") for key, value in scope.get("headers", ()) if key == b"host"), "")
    if not host and scope.get("server"):
        address, port = scope["server"][0], scope["server"][1]
        host = f"[{address}]:{port}" if ":" in str(address) else f"{address}:{port}"
    return f"{scope.get('scheme', 'http')}://{host or '127.0.0.1'}"
