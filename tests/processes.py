"""The one way tests (and benchmarks) start processes, so that a run leaves nothing behind.

popen() / run() / exec_async() / shell_async(): subprocess.Popen, subprocess.run and asyncio's
create_subprocess_* with the child leading a process group of its own, registered here. The
group is killed (SIGKILL to every member: a memoryd server's engine ignores SIGTERM sent to the
group) when the test that started it ends, passes, fails or times out (tests/conftest.py's
teardown hook), and every group still alive when the process exits (kill_groups() at the end of
the pytest session, and atexit). A process that a test started and that starts processes itself
(a benchmark script, an example) passes GROUP_ENV down: its children stay in its group, so
killing that one group kills all of them.

ServerProcess: a server as a child process that reports its port through `--port-file`: the one
helper every suite (and benchmark) uses to start `memoryd serve`, or another server with that
flag. start() waits, bounded, for the port file and fails with the end of the process's log;
terminate() sends SIGTERM and waits, bounded, then kills; the log keeps stdout and stderr.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
# The bound of a benchmark's toy-size run in its smoke test (tests/load/test_bench_*.py,
# tests/events/test_benchmarks_run.py): a stall detector, far above the worst case on a loaded
# 2-core machine; those tests' pytest-timeout (SMOKE_TEST_TIMEOUT) is longer still, so the
# run's own timeout fires first and its whole process group is killed.
SMOKE_TIMEOUT = 600.0
SMOKE_TEST_TIMEOUT = SMOKE_TIMEOUT + 120

# Set in the environment of every process started here: a process that has it is already in a
# group a test owns, and its own children join that group instead of leading new ones.
GROUP_ENV = "MEMORYD_TEST_PROCESS_GROUP"

# The groups this process started and has not seen killed: leader pid -> the scope that owns
# it ("function": killed when the test ends; any other scope: at the end of the session).
_groups: dict[int, str] = {}
# The scope of the fixture being set up now (tests/conftest.py pushes and pops it); a process
# started with nothing here belongs to the test that is running.
owners: list[str] = []


def _in_owned_group() -> bool:
    return GROUP_ENV in os.environ


def _group_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    env = kwargs.get("env")
    kwargs["env"] = {**(os.environ if env is None else env), GROUP_ENV: "1"}
    if not _in_owned_group():
        kwargs["process_group"] = 0
    return kwargs


def _register(pid: int) -> None:
    if not _in_owned_group():
        _groups[pid] = owners[-1] if owners else "function"


def popen(argv: Sequence[str] | str, **kwargs: Any) -> subprocess.Popen:
    """subprocess.Popen(argv, **kwargs), the child leading a process group that is killed when
    the test (or fixture scope) that started it ends."""
    process = subprocess.Popen(argv, **_group_kwargs(kwargs))
    _register(process.pid)
    return process


def run(
    argv: Sequence[str] | str,
    *,
    input: str | bytes | None = None,
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    **kwargs: Any,
) -> subprocess.CompletedProcess:
    """subprocess.run through popen(): on a timeout, a failure or an exception raised into it
    (pytest-timeout's), and after it returns, its whole group is killed: what the command
    started and left running goes with it."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    process = popen(argv, **kwargs)
    try:
        stdout, stderr = process.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        kill_group(process.pid)
        process.wait()
        raise subprocess.TimeoutExpired(process.args, expired.timeout, expired.output, expired.stderr) from None
    except BaseException:
        kill_group(process.pid)
        process.wait()
        raise
    finally:
        kill_group(process.pid)
    completed = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check:
        completed.check_returncode()
    return completed


async def exec_async(program: str, *args: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """asyncio.create_subprocess_exec through the same process groups as popen()."""
    process = await asyncio.create_subprocess_exec(program, *args, **_group_kwargs(kwargs))
    _register(process.pid)
    return process


async def shell_async(command: str, **kwargs: Any) -> asyncio.subprocess.Process:
    """asyncio.create_subprocess_shell through the same process groups as popen()."""
    process = await asyncio.create_subprocess_shell(command, **_group_kwargs(kwargs))
    _register(process.pid)
    return process


def kill_group(pid: int, timeout: float = STOP_TIMEOUT) -> list[int]:
    """SIGKILL every process of the group that `pid` leads, if this process started it (a
    child in an inherited group is left to whoever owns that group), and wait, bounded, until
    they have died; returns those that were still running."""
    if _groups.pop(pid, None) is None:
        return []
    members = [member for member in _members(pid) if alive(member)]
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        return []
    deadline = time.monotonic() + timeout
    while any(alive(member) for member in members) and time.monotonic() < deadline:
        time.sleep(0.01)
    return members


def kill_groups(scope: str | None = None) -> list[int]:
    """Kill the groups owned by `scope` (every group when None); returns the processes that
    were still running in them."""
    left = []
    for pid, owner in list(_groups.items()):
        if scope is None or owner == scope:
            left += kill_group(pid)
    return left


def _members(pgid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(") ", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError, IndexError):
                continue
            if int(fields[2]) == pgid:  # state, ppid, pgrp
                found.append(int(entry))
    return found


atexit.register(kill_groups)


def memoryd_executable() -> str:
    """The installed `memoryd` command: $MEMORYD_BIN, beside this Python, or on PATH."""
    explicit = os.environ.get("MEMORYD_BIN")
    if explicit:
        return explicit
    beside_python = Path(sys.executable).with_name("memoryd")
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("memoryd")
    if found is None:
        raise RuntimeError("memoryd not found: pip install -e . (or set MEMORYD_BIN)")
    return found


class ServerProcess:
    """`argv --port-file WORKDIR/NAME.port`, logging to WORKDIR/NAME.log."""

    def __init__(
        self,
        argv: Sequence[str],
        workdir: Path,
        *,
        name: str = "memoryd",
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        preexec_fn: Callable[[], None] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.workdir = workdir
        self.port_file = workdir / f"{name}.port"
        self.log_path = workdir / f"{name}.log"
        self.env = {**os.environ, **(env or {})}
        self.cwd = cwd
        self.preexec_fn = preexec_fn
        self.port = 0
        self.process: subprocess.Popen | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = STARTUP_TIMEOUT) -> int:
        """Start it and wait until it has written its port; returns the port."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port_file.unlink(missing_ok=True)
        with self.log_path.open("ab") as log:
            self.process = popen(
                [*self.argv, "--port-file", str(self.port_file)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=self.env,
                cwd=self.cwd,
                preexec_fn=self.preexec_fn,
            )
        deadline = time.monotonic() + timeout
        while not (text := self._port_text()):
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.argv[0]} exited with {self.process.returncode}:\n{self.log()[-4000:]}")
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"{self.argv[0]} did not start within {timeout} s:\n{self.log()[-4000:]}")
            time.sleep(0.05)
        self.port = int(text)
        return self.port

    def _port_text(self) -> str:
        try:
            text = self.port_file.read_text().strip()
        except FileNotFoundError:
            return ""
        return text if text.isdigit() else ""

    def terminate(self, timeout: float = STOP_TIMEOUT) -> int:
        """SIGTERM, then wait at most `timeout` seconds (then SIGKILL); returns the exit code.
        Like kill(), it returns once the server's own processes have exited too."""
        assert self.process is not None
        if self.process.poll() is None:
            family = descendants(self.process.pid)
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
            wait_gone(family, timeout)
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL (a crash), and reap it; then wait until its own processes (memoryd's vector
        engine, an index builder) have exited: they hold the data dir until they do."""
        if self.process is not None and self.process.poll() is None:
            family = descendants(self.process.pid)
            self.process.kill()
            self.process.wait(STOP_TIMEOUT)
            wait_gone(family, STOP_TIMEOUT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """terminate() for a finally or a `with`; once it has ended it does nothing."""
        if self.process is not None:
            self.terminate()


class MemorydServer(ServerProcess):
    """`memoryd serve ARGS` on WORKDIR/data, on a loopback port that restarts keep (as a
    supervisor would), so tests can SIGTERM, kill -9 and restart it on the same data."""

    def __init__(self, workdir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        super().__init__([], workdir, env=env)
        self.data_dir = workdir / "data"
        self.args = args

    def start(self, timeout: float = STARTUP_TIMEOUT) -> int:
        self.argv = [
            memoryd_executable(), "serve",
            "--listen", self.target,
            # A restart reuses the gRPC port; port + 1 (the HTTP default) may have been
            # taken meanwhile, so HTTP gets a free port of its own.
            "--http-listen", "127.0.0.1:0",
            "--data-dir", str(self.data_dir),
            *self.args,
        ]  # fmt: skip
        return super().start(timeout)


def descendants(pid: int) -> list[int]:
    """The processes `pid` started, and theirs (Linux /proc)."""
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as children:
                for child in map(int, children.read().split()):
                    found += [child, *descendants(child)]
    except FileNotFoundError:
        pass
    return found


def alive(pid: int) -> bool:
    """Running (not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pids: Sequence[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes {[p for p in pids if alive(p)]} still running after {timeout} s")
        time.sleep(0.05)
