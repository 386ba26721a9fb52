"""The workers benchmark still runs end to end (at toy sizes; its figures are not asserted)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests import processes

# A toy-size run: its timeout detects a stall, it never paces (tests/processes.py).
pytestmark = pytest.mark.timeout(processes.SMOKE_TEST_TIMEOUT)

SCRIPT = Path(__file__).with_name("bench_workers.py")


@pytest.mark.parametrize(
    ("mode", "counted"),
    [(["--rounds", "1"], "| save_message |"), (["--scaling", "1,2"], "(1.00x)")],
    ids=["one-vs-two", "scaling"],
)
def test_the_workers_benchmark_measures_every_scenario_on_one_and_two_workers(tmp_path, mode, counted):
    out = tmp_path / "rows.json"
    done = processes.run(
        [sys.executable, str(SCRIPT), "--workdir", str(tmp_path), *mode, "--duration", "1",
         "--messages", "5", "--vectors", "50", "--json", str(out)],
        capture_output=True, text=True, timeout=processes.SMOKE_TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(out.read_text())
    assert {(r["workers"], r["scenario"]) for r in rows} == {
        (w, s) for w in (1, 2) for s in ("get_history", "search_memory", "save_message")
    }
    assert all(r["calls"] > 0 and r["errors"] == 0 for r in rows)
    assert "| save_message |" in done.stdout and counted in done.stdout
