"""The Edge GIL probe still runs end to end (at toy sizes; its numbers are not asserted)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)

SCRIPT = Path(__file__).with_name("probe_edge_gil.py")


def test_the_edge_gil_probe_runs():
    done = processes.run([sys.executable, str(SCRIPT), "--points", "2000", "--queries", "30"],
                          capture_output=True, text=True, timeout=processes.SMOKE_TIMEOUT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"^2,000 points: 1 thread [\d,]+ q/s, 2 threads [\d,]+ q/s \([\d.]+x\); "
                     r"a Python thread beside the queries runs at \d+% of its rate alone$", done.stdout, re.M), done.stdout
