"""The custom strategies' benchmark still runs end to end (toy sizes; its timings are not
asserted): one custom strategy forms a record per "i like ..." message and costs its calls."""

from __future__ import annotations

import pytest
from loadlib import run_bench

from tests import processes

pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)


def test_one_custom_strategy_forms_its_records_and_says_what_it_spent():
    result = run_bench("bench_custom.py", "--messages", "40", "--strategies", "1")
    assert result["custom_strategies"] == 1 and result["messages"] == 40
    assert result["custom_records"] == 20  # every other message says "i like ..."
    custom = result["usage"]["custom"]
    assert custom["calls_per_1000"] > 0 and custom["prompt_tokens_per_1000"] > 0
