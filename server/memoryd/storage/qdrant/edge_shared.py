"""One Qdrant Edge engine process per data dir, shared by `--workers N` over a Unix socket.

Qdrant Edge is one process per folder, so N serving processes cannot each run their own
engine (edge_process.py's child). Instead the parent of the workers (memoryd.workers, the
supervisor) starts one engine process before it forks them: `python -m
memoryd.storage.qdrant.edge_process unix:<data-dir>/vector-engine.sock ...`. It listens on
that socket and answers every worker's connection with the one index (edge_process.Engine),
and hosts the data dir's background work (memoryd/engine.py's log consumers) once. This
module is the supervisor's side; the engine's (`serve_shared`) and the workers' (`connect`)
are in edge_process.py.

- Started once: the supervisor starts it, and restarts it (with the workers' backoff and
  limit) if it dies; a lock file next to the socket keeps a second one (another memoryd on the
  same data dir) from taking the socket over while the first runs. Workers connect on their
  first call and reconnect on the next call after the connection drops (calls in between get
  UNAVAILABLE, as on a Qdrant server's restart).
- Outlives no server: its stdin is a pipe from the supervisor, which nobody else holds (the
  workers close their inherited copy); it stops when that pipe ends, i.e. when the supervisor
  closes it after the workers have stopped, or dies, even by SIGKILL. The parent-death signal
  is a second way out. Like edge_process.py's child it ignores SIGINT and SIGTERM sent to the
  whole process group: the workers may still be writing while they stop.
- Ready: it prints one line on stdout once it listens; the supervisor waits for that line
  before it forks the workers, and reads the end of that pipe as the engine's exit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from memoryd.storage.qdrant import edge_process

log = logging.getLogger(__name__)

SOCKET_NAME = "vector-engine.sock"
READY = edge_process.READY


def socket_path(data_dir: Path) -> Path:
    return Path(data_dir) / SOCKET_NAME


# -- the supervisor's side ------------------------------------------------------------
class SharedEngine:
    """The engine process as memoryd.workers supervises it (a workers.Companion)."""

    name = "vector-engine"

    def __init__(
        self,
        data_dir: Path,
        root: Path,
        settings: dict[str, Any],
        *,
        log_level: str,
        host: dict[str, Any],
        entry: str | None = None,
    ) -> None:
        """`entry`: the engine's program (edge_process.command)."""
        self.path = socket_path(data_dir)
        self.root = root
        self.settings = {k: str(v) if isinstance(v, Path) else v for k, v in settings.items()}
        self.log_level = log_level
        self.host = host
        self.entry = entry
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = edge_process.START_SECONDS) -> None:
        """Start it and wait until it listens; OSError when it does not."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        process = self.process = subprocess.Popen(
            edge_process.command(f"unix:{self.path}", self.log_level, self.root, self.settings, self.host, self.entry),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=edge_process.environment(self.host),
        )  # fmt: skip
        assert process.stdout is not None  # a pipe
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = _select(process.stdout, deadline - time.monotonic())
            if not ready:
                break
            chunk = os.read(process.stdout.fileno(), 64)
            if not chunk:
                break
            line += chunk
        if line != READY:
            self.stop(0)
            raise OSError(f"the vector engine process did not start (exit {process.returncode})")

    def sentinel(self) -> int:
        """Readable once the process has exited (its stdout ends)."""
        assert self.process is not None and self.process.stdout is not None  # started
        return self.process.stdout.fileno()

    def inherited(self) -> list[int]:
        """The descriptors a forked worker must close, so only the supervisor keeps it alive."""
        if self.process is None:
            return []
        pipes = (self.process.stdin, self.process.stdout)
        return [pipe.fileno() for pipe in pipes if pipe is not None and not pipe.closed]

    def stop(self, timeout: float = edge_process.STOP_SECONDS) -> int | None:
        """End its pipe (it closes the index and exits); killed after `timeout`."""
        process = self.process
        if process is None:
            return None
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("vector engine process %s did not stop in %.0fs: killed", process.pid, timeout)
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        return process.returncode


def _select(stream, timeout: float):
    import select

    return select.select([stream], [], [], max(0.0, timeout))
