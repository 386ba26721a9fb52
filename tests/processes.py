"""A server as a child process that reports its port through `--port-file`: the one helper
every suite (and benchmark) uses to start `memoryd serve`, or another server with that flag.

start() waits, bounded, for the port file and fails with the end of the process's log;
terminate() sends SIGTERM and waits, bounded, then kills; the log keeps stdout and stderr.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


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
            self.process = subprocess.Popen(
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
