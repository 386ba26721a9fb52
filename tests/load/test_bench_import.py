"""The import benchmark still runs end to end (at toy sizes; its timings are not asserted)."""

from __future__ import annotations

import pytest
from loadlib import run_bench

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)


def run(*args: str) -> dict:
    return run_bench("bench_import.py", *args)


def test_an_import_ends_with_the_index_equal_to_the_store():
    result = run("import", "--messages", "2000", "--batch", "100")
    assert result["keyword_points"] == 2000 and result["lag"] == 0
    assert (result["missing"], result["orphans"]) == (0, 0)


def test_saves_with_keywords_on_and_off_in_one_run():
    result = run("saves", "--calls", "40")
    assert result["keywords_on"]["keyword_points"] == 40 and result["keywords_off"]["keyword_points"] == 0
