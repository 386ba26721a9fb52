"""The SearchMemory MongoDB-vs-SQLite benchmark still runs end to end (at toy sizes; its timings are not asserted)."""

from __future__ import annotations

import pytest
from loadlib import run_bench

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)


def test_both_backends_answer_every_top_k():
    result = run_bench("bench_search_backends.py", "--sessions", "3", "--messages", "12", "--searches", "1")
    for lift in ("lift", "no_lift"):
        for top_k in (1, 5, 10, 20, 50):
            row = result[f"{lift}_top{top_k}"]
            assert row["sqlite"]["median_ms"] > 0 and row["mongodb"]["median_ms"] > 0
