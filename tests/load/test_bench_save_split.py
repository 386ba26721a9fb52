"""The SaveMessage split benchmark still runs end to end (at toy sizes; its timings are not asserted)."""

from __future__ import annotations

import pytest
from loadlib import run_bench

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)


def test_the_split_counts_every_write_and_clocks_its_statements():
    result = run_bench("bench_save_split.py", "--calls", "64", "--concurrency", "4", "--sql")
    assert result["calls"] == 64 and result["cpu_us_per_call"] >= result["loop_cpu_us_per_call"] > 0
    # Every call was one write in some commit group, and each wrote its message row.
    assert sum(int(size) * n for size, n in result["commit_groups"].items()) == 64
    assert any(statement.startswith("INSERT INTO messages") for statement in result["sql_us_per_write"])
