"""tests/processes.py and tests/conftest.py's hooks: a process a test starts (and what it starts)
is gone when the test ends, whether it passed, failed or pytest-timeout stopped it; a process a
module-scoped fixture starts lives until the session ends, then goes too."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from tests import processes

REPO = Path(__file__).resolve().parents[1]

# Starts a child that sleeps, writes both pids to argv[1] and sleeps: a server and its engine.
SPAWNER = textwrap.dedent(
    """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(sys.argv[1], "a") as pids:
        pids.write(f"{child.pid} ")
        pids.write(f"{__import__('os').getpid()}\\n")
    time.sleep(600)
    """
)

INNER = textwrap.dedent(
    """
    import os, sys, time
    import pytest
    from tests import processes

    # This session starts its groups as a top-level run does (not in the outer test's group).
    os.environ.pop(processes.GROUP_ENV)
    PIDS = {pids!r}
    SPAWNER = {spawner!r}

    def start(tag):
        processes.popen([sys.executable, "-c", SPAWNER, PIDS + "." + tag])
        deadline = time.monotonic() + 60
        while not (os.path.exists(PIDS + "." + tag) and open(PIDS + "." + tag).read().endswith("\\n")):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        return [int(p) for p in open(PIDS + "." + tag).read().split()]

    @pytest.fixture(scope="module")
    def shared():
        return start("module")

    def test_passes(shared):
        start("passed")

    def test_fails(shared):
        start("failed")
        assert False

    def test_times_out(shared):
        start("timeout")
        time.sleep(600)

    def test_sees_the_module_process_and_none_of_the_earlier_tests(shared):
        assert all(processes.alive(pid) for pid in shared)
        for tag in ("passed", "failed", "timeout"):
            assert not any(processes.alive(int(p)) for p in open(PIDS + "." + tag).read().split())
    """
)


def test_no_process_outlives_its_test_or_the_session(tmp_path):
    pids = tmp_path / "pids"
    (tmp_path / "test_inner.py").write_text(INNER.format(pids=str(pids), spawner=SPAWNER))
    done = processes.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "-n", "0",
         "--timeout", "20", "--rootdir", str(tmp_path), str(tmp_path / "test_inner.py")],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "2 failed, 2 passed" in done.stdout, done.stdout + done.stderr
    assert "Timeout (>20.0s)" in done.stdout
    started = {tag: [int(p) for p in (tmp_path / f"pids.{tag}").read_text().split()]
               for tag in ("module", "passed", "failed", "timeout")}  # fmt: skip
    assert all(len(found) == 2 for found in started.values())
    assert [pid for found in started.values() for pid in found if processes.alive(pid)] == []
