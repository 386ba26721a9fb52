"""Every snippet of docs/CLIENTS.md, docs/INTEGRATIONS.md and of the README's Clients and
"Use it from your agent framework" sections is exercised.

- Python blocks run against a live server (127.0.0.1:50051 becomes its address), with the
  test environment's scripts (memoryd-mcp) on PATH.
- JSON blocks are MCP host configurations: each server's command, run as configured, serves
  the SDK's client session its tools.
- Go, TypeScript and Java blocks are verbatim excerpts (line by line, indentation aside) of
  the examples and sources that scripts/test-clients builds and runs.
- Shell lines are commands scripts/test-clients runs, once 127.0.0.1:50051 reads "$addr",
  /path/to/memoryd reads "$root" and ~/memoryd-ts-example "$work/ts-example" (comments and
  bare `cd` lines aside), or the contract commands scripts/test and scripts/check-contract run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.processes import MemorydServer
from tests import processes

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
SOURCES = {
    "go": ["clients/go/examples/watchdeletions/main.go", *map(str, (ROOT / "clients/go/memoryd").glob("*.go"))],
    "ts": ["clients/typescript/examples/watch-deletions.ts"],
    "java": ["clients/java/examples/src/main/java/dev/memoryd/examples/WatchDeletions.java"],
}
SHELL_SUBSTITUTIONS = {"127.0.0.1:50051": '"$addr"', "/path/to/memoryd": '"$root"', "~/memoryd-ts-example": '"$work/ts-example"'}


def section(doc: str, title: str) -> str:
    return (ROOT / doc).read_text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def sections() -> dict[str, str]:
    return {
        "README.md#first-call": section("README.md", "A first call from Python"),
        "docs/GUIDE.md#clients": section("docs/GUIDE.md", "Clients"),
        "docs/GUIDE.md#frameworks": section("docs/GUIDE.md", "Use it from your agent framework"),
        "docs/CLIENTS.md": (ROOT / "docs/CLIENTS.md").read_text(),
        "docs/INTEGRATIONS.md": (ROOT / "docs/INTEGRATIONS.md").read_text(),
    }


def blocks(language: str) -> list[tuple[str, str]]:
    return [
        (f"{where}:{n}", body)
        for where, text in sections().items()
        for n, (lang, body) in enumerate(FENCE.findall(text))
        if lang == language
    ]


def stripped(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize(("where", "body"), blocks("python"), ids=[w for w, _ in blocks("python")])
def test_python_snippets_run(memoryd: MemorydServer, tmp_path, where: str, body: str):
    code = body.replace("127.0.0.1:50051", memoryd.target)
    result = processes.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=snippet_environment()
    )
    assert result.returncode == 0, f"{where} failed:\n{result.stderr}"


def snippet_environment() -> dict[str, str]:
    # The Agents SDK would export traces to OpenAI's service; there is none here.
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "OPENAI_AGENTS_DISABLE_TRACING": "1"}


@pytest.mark.parametrize(("where", "body"), blocks("json"), ids=[w for w, _ in blocks("json")])
async def test_mcp_host_configurations_start_the_server(memoryd: MemorydServer, where: str, body: str):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    for name, server in json.loads(body.replace("127.0.0.1:50051", memoryd.target))["mcpServers"].items():
        command = shutil.which(server["command"], path=snippet_environment()["PATH"])
        params = StdioServerParameters(command=command, args=server["args"], env={**os.environ, **server["env"]})
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            assert "memory_save" in {tool.name for tool in (await session.list_tools()).tools}, (where, name)


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_code_snippets_are_excerpts_of_code_that_runs(language: str):
    sources = [stripped((ROOT / path).read_text()) for path in SOURCES[language]]
    found = blocks(language)
    assert found, f"no {language} snippet: the check would prove nothing"
    for where, body in found:
        lines = stripped(body)
        assert any(
            source[i : i + len(lines)] == lines for source in sources for i in range(len(source))
        ), f"{where}: not an excerpt of {SOURCES[language]}:\n{body}"


def test_shell_lines_are_commands_the_tests_run():
    ran = "".join((ROOT / "scripts" / name).read_text() for name in ("test-clients", "test", "check-contract"))
    for where, body in blocks("sh"):
        for line in body.splitlines():
            command = line.split("  #", 1)[0].split(" # ", 1)[0].strip()
            if not command or command.startswith("#") or re.fullmatch(r"cd \S+", command):
                continue
            for shown, run in SHELL_SUBSTITUTIONS.items():
                command = command.replace(shown, run)
            assert command in ran, f"{where}: {command!r} is not run by scripts/test-clients or scripts/test"
