"""The catch-up benchmark script still runs end to end (at toy sizes; its numbers are not asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)

SCRIPT = Path(__file__).with_name("bench_catch_up.py")


def test_catch_up_benchmark_runs_and_loses_nothing():
    command = [sys.executable, str(SCRIPT), "--events", "3000", "--subscribers", "5", "--rounds", "1", "--duration", "0.5"]
    done = processes.run(command, capture_output=True, text=True, timeout=processes.SMOKE_TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "full replay after_seq=0: {'events': 3000," in out, out
    assert "0 missing, errors none" in out, out
    assert "p99 during / without:" in out, out
