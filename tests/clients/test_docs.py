"""Every snippet of docs/CLIENTS.md and of the README's Clients section is exercised.

- Python blocks run against a live server (127.0.0.1:50051 becomes its address).
- Go, TypeScript and Java blocks are verbatim excerpts (line by line, indentation aside) of
  the examples and sources that scripts/test-clients builds and runs.
- Shell lines are commands scripts/test-clients runs, once 127.0.0.1:50051 reads "$addr"
  and /path/to/memoryd reads "$root" (comments and bare `cd` lines aside), or the contract
  commands scripts/test and scripts/check-contract run.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.live import MemorydProcess

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)
SOURCES = {
    "go": ["clients/go/examples/watchdeletions/main.go", *map(str, (ROOT / "clients/go/memoryd").glob("*.go"))],
    "ts": ["clients/typescript/examples/watch-deletions.ts"],
    "java": ["clients/java/examples/src/main/java/dev/memoryd/examples/WatchDeletions.java"],
}
SHELL_SUBSTITUTIONS = {"127.0.0.1:50051": '"$addr"', "/path/to/memoryd": '"$root"'}


def sections() -> dict[str, str]:
    readme = (ROOT / "README.md").read_text()
    clients = readme.split("\n## Clients\n", 1)[1].split("\n## ", 1)[0]
    return {"README.md#clients": clients, "docs/CLIENTS.md": (ROOT / "docs/CLIENTS.md").read_text()}


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
def test_python_snippets_run(memoryd: MemorydProcess, tmp_path, where: str, body: str):
    code = body.replace("127.0.0.1:50051", memoryd.target)
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"{where} failed:\n{result.stderr}"


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
