"""The formation benchmark still runs end to end (toy sizes; its timings are not asserted)."""

from __future__ import annotations

import pytest
from loadlib import run_bench

from tests import processes

pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)


def test_formation_on_and_off_and_what_it_spent():
    result = run_bench("bench_formation.py", "--calls", "60", "--rounds", "1")
    round_ = result["rounds"][0]
    assert round_["off"]["rps"] > 0 and round_["on"]["rps"] > 0 and round_["on"]["formed_msgs_per_s"] > 0
    facts = round_["on"]["per_1000_messages"]["facts"]
    assert facts["calls"] > 0 and facts["prompt_tokens"] > 0 and facts["failures"] == 0
