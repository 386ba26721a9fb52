"""The workers benchmark still runs end to end (at toy sizes; its figures are not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("bench_workers.py")


def test_the_workers_benchmark_measures_every_scenario_on_one_and_two_workers(tmp_path):
    out = tmp_path / "rows.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--workdir", str(tmp_path), "--rounds", "1", "--duration", "1",
         "--messages", "5", "--vectors", "50", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(out.read_text())
    assert {(r["workers"], r["scenario"]) for r in rows} == {
        (w, s) for w in (1, 2) for s in ("get_history", "search_memory", "save_message")
    }
    assert all(r["calls"] > 0 and r["errors"] == 0 for r in rows)
    assert "| save_message |" in done.stdout


def test_the_scaling_mode_measures_every_scenario_at_each_worker_count(tmp_path):
    out = tmp_path / "rows.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--workdir", str(tmp_path), "--scaling", "1,2", "--duration", "1",
         "--messages", "5", "--vectors", "50", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(out.read_text())
    assert {(r["workers"], r["scenario"]) for r in rows} == {
        (w, s) for w in (1, 2) for s in ("get_history", "search_memory", "save_message")
    }
    assert all(r["calls"] > 0 and r["errors"] == 0 for r in rows)
    assert "| save_message |" in done.stdout and "(1.00x)" in done.stdout
