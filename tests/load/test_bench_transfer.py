"""The export / import benchmark still runs end to end (at a toy size; its numbers are not asserted)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)

SCRIPT = Path(__file__).with_name("bench_transfer.py")


def test_the_transfer_benchmark_exports_and_imports_every_message(tmp_path):
    command = [sys.executable, str(SCRIPT), "--messages", "2500", "--sessions", "3", "--tmp", str(tmp_path)]
    done = processes.run(command, capture_output=True, text=True, timeout=processes.SMOKE_TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    steps = [json.loads(line) for line in done.stdout.splitlines()]
    assert [s["step"] for s in steps] == ["seed", "export", "import"]
    for step in steps[1:]:
        assert step["messages"] == 2500 and step["peak_rss_mib"] > 0
