"""README's curl quickstart, run verbatim against `memoryd serve` on its default addresses.

The default addresses (127.0.0.1:50051 and :50052) may be taken on a shared machine, so the
server and the commands run in a private network namespace (`unshare -n`, root only).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
MEMORYD = Path(sys.executable).parent / "memoryd"
MARK = "=== next command ==="


def _curl_commands() -> list[str]:
    """The shell commands of the README's curl section, continuation lines joined."""
    section = README.read_text().split("## Try it with curl", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in section.split("```sh\n")[1:]:
        lines = block.split("```", 1)[0].splitlines()
        command = ""
        for line in lines:
            command += line + "\n"
            if not line.endswith("\\"):
                commands.append(command.strip())
                command = ""
    return commands


def _can_unshare() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None or shutil.which("curl") is None:
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_unshare(), reason="needs unshare -n (root), ip and curl")
def test_readme_curl_quickstart_works_verbatim(tmp_path):
    commands = _curl_commands()
    assert len(commands) == 4 and all(c.startswith("curl ") for c in commands), commands
    script = tmp_path / "quickstart.sh"
    script.write_text(
        "set -u\n"
        "ip link set lo up\n"
        f"'{MEMORYD}' serve --data-dir '{tmp_path / 'data'}' --port-file '{tmp_path / 'port'}' 2>'{tmp_path / 'log'}' &\n"
        "server=$!\n"
        f"for _ in $(seq 300); do [ -s '{tmp_path / 'port'}' ] && break; sleep 0.1; done\n"
        + "".join(f"echo '{MARK}'\n{command}\nstatus=$?\necho\necho \"exit=$status\"\n" for command in commands)
        + "kill $server; wait $server\n"
    )
    run = subprocess.run(["unshare", "-n", "bash", str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    outputs = run.stdout.split(MARK + "\n")[1:]
    assert len(outputs) == len(commands), (run.stdout, run.stderr, (tmp_path / "log").read_text())
    results = []
    for output in outputs:
        body, _, status = output.rstrip("\n").rpartition("\n")
        assert status == "exit=0", output
        results.append(body)

    saved, history, _, invalid = results
    assert json.loads(saved)["message"]["content"] == "hello memoryd"
    assert [m["content"] for m in json.loads(history)["messages"]] == ["hello memoryd"]
    openapi = json.loads((tmp_path / "memoryd-openapi.json").read_text())
    assert "/memoryd.v1.MemoryService/GetHistory" in openapi["paths"]
    error = json.loads(invalid)
    assert error["code"] == "invalid_argument"
    details = {d["type"]: d["debug"] for d in error["details"]}
    assert details["google.rpc.ErrorInfo"]["reason"] == "INVALID_ARGUMENT"
    assert details["google.rpc.BadRequest"]["fieldViolations"][0]["field"] == "session_id"
