"""The synchronizer benchmark still runs end to end (at toy sizes; its timings are not asserted)."""

from __future__ import annotations

import pytest
from loadlib import run_bench

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)


def test_the_synchronizer_indexes_every_seeded_message():
    result = run_bench("bench_sync.py", "--messages", "1000", "--batch", "100", "--check")
    assert (result["messages"], result["missing"], result["orphans"]) == (1000, 0, 0)
