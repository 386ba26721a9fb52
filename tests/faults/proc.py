"""`memoryd serve` as a child process that fault tests may SIGTERM or kill -9 and restart
on the same data directory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

STARTUP_TIMEOUT = 60.0


class Server:
    def __init__(self, workdir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.port_file = workdir / "port"
        self.log_path = workdir / "memoryd.log"
        self.args = args
        self.env = env or {}
        self.port = 0
        self.process: subprocess.Popen | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        self.port_file.unlink(missing_ok=True)
        listen = f"127.0.0.1:{self.port}"  # a restart reuses the port, as a supervisor would
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    str(Path(sys.executable).with_name("memoryd")),
                    "serve",
                    "--listen", listen,
                    # A restart reuses the gRPC port; port + 1 (the HTTP default) may
                    # have been taken meanwhile, so HTTP gets a free port of its own.
                    "--http-listen", "127.0.0.1:0",
                    "--data-dir", str(self.data_dir),
                    "--port-file", str(self.port_file),
                    *self.args,
                ],
                stdout=subprocess.DEVNULL,
                stderr=log,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **self.env},
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not (self.port_file.exists() and self.port_file.read_text().strip()):
            if self.process.poll() is not None:
                raise RuntimeError(f"memoryd exited with {self.process.returncode}: {self.log()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"memoryd did not start: {self.log()[-2000:]}")
            time.sleep(0.05)
        self.port = int(self.port_file.read_text())

    def kill9(self) -> None:
        assert self.process is not None
        self._signal_and_wait(signal.SIGKILL, 30)

    def terminate(self) -> int:
        """SIGTERM; returns the exit code."""
        assert self.process is not None
        return self._signal_and_wait(signal.SIGTERM, 60)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self._signal_and_wait(signal.SIGKILL, 30)

    def _signal_and_wait(self, signum: int, timeout: float) -> int:
        """Signal the server and wait until it and its own processes (the vector engine, an
        index builder) are gone: they hold the data dir's vector folder until they exit."""
        family = descendants(self.process.pid)
        self.process.send_signal(signum)
        code = self.process.wait(timeout=timeout)
        deadline = time.monotonic() + timeout
        while any(alive(pid) for pid in family):
            if time.monotonic() > deadline:
                raise RuntimeError(f"memoryd's processes {family} outlived it by {timeout}s")
            time.sleep(0.05)
        return code

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def descendants(pid: int) -> list[int]:
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
