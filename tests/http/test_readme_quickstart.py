"""README's curl quickstart, run verbatim against `memoryd serve` on its default addresses
(in a private network namespace: tests/readme_shell.py)."""

from __future__ import annotations

import json

import pytest

from tests.readme_shell import can_unshare, run_verbatim, section_commands


@pytest.mark.skipif(not can_unshare(), reason="needs unshare -n (root), ip and curl")
def test_readme_curl_quickstart_works_verbatim(tmp_path):
    commands = section_commands("## Try it with curl (HTTP/JSON, nothing to install)")
    assert len(commands) == 4 and all(c.startswith("curl ") for c in commands), commands
    saved, history, _, invalid = run_verbatim(commands, tmp_path)
    assert json.loads(saved)["message"]["content"] == "hello memoryd"
    assert [m["content"] for m in json.loads(history)["messages"]] == ["hello memoryd"]
    openapi = json.loads((tmp_path / "memoryd-openapi.json").read_text())
    assert "/memoryd.v1.MemoryService/GetHistory" in openapi["paths"]
    error = json.loads(invalid)
    assert error["code"] == "invalid_argument"
    details = {d["type"]: d["debug"] for d in error["details"]}
    assert details["google.rpc.ErrorInfo"]["reason"] == "INVALID_ARGUMENT"
    assert details["google.rpc.BadRequest"]["field_violations"][0]["field"] == "session_id"
