"""Every example the README runs with `.venv/bin/python examples/...` prints its own output
and no debug or info log lines: not the embedded server's (structlog's console renderer
printed every `rpc` debug line before the examples configured logging), not gRPC core's.
Warnings and errors are left visible on purpose. (What watch_deletions and assemble_context
print is checked by tests/events/test_example.py and tests/summaries/test_example.py.)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from tests import processes

REPO = Path(__file__).resolve().parents[1]
README_RUNS = sorted(set(re.findall(r"\.venv/bin/python (examples/\w+\.py)\b", "\n".join((REPO / doc).read_text() for doc in ("README.md", "docs/GUIDE.md")))))

# A log line below warning: a JSON record, structlog's console form, or gRPC core's own
# ("I1202 07:55:05.123 1234 chttp2_transport.cc:1403] ...").
CONSOLE_LOW = re.compile(r"\[(debug|info)\s*\]")
GRPC_CORE_LOW = re.compile(r"^[DI]\d{4} \d\d:\d\d:\d\d")


def low_log_lines(output: str) -> list[str]:
    found = []
    for line in output.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and record.get("level") in ("debug", "info"):
            found.append(line)
        elif CONSOLE_LOW.search(line) or GRPC_CORE_LOW.match(line):
            found.append(line)
    return found


def test_the_readme_runs_the_examples_that_start_their_own_server():
    assert README_RUNS == ["examples/assemble_context.py", "examples/vector_recall.py", "examples/watch_deletions.py"]


@pytest.mark.parametrize("example", README_RUNS)
def test_an_example_prints_no_debug_lines(example):
    done = processes.run([sys.executable, example], cwd=REPO, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert done.stdout.strip(), "the example printed nothing of its own"
    assert low_log_lines(output) == [], output[-3000:]
