"""`memoryd serve` with what no stop can end: a background task and a GetHistory handler
that both ignore their cancellation, the handler also holding a thread that never returns;
with --spin, the task instead blocks the event loop once cancelled. Used by
tests/faults/test_stop_bounds.py, which SIGTERMs it and expects the process to exit.

    python -m tests.faults.stubborn_server [--spin] SERVE-ARGS...
"""

from __future__ import annotations

import asyncio
import sys
import threading

from memoryd import app, cli
from memoryd.domain.memory import Memory


async def ignore_cancellation(future: asyncio.Future) -> None:
    """Wait for `future` (one no one cancels), swallowing every CancelledError meanwhile."""
    while True:
        try:
            await asyncio.shield(future)
            return
        except asyncio.CancelledError:
            pass


async def stubborn_history(self, tenant: str, session_id: str, limit: int):
    await ignore_cancellation(asyncio.get_running_loop().run_in_executor(None, threading.Event().wait))


async def spin_when_cancelled() -> None:
    try:
        await asyncio.Event().wait()
    finally:
        while True:  # the event loop's thread never comes back
            pass


def main(argv: list[str]) -> int:
    spin = argv[:1] == ["--spin"]
    serve_args = argv[1:] if spin else argv
    background_tasks = app._background_tasks

    def with_a_stubborn_task(running: app.App) -> list[asyncio.Task]:
        stubborn = spin_when_cancelled() if spin else ignore_cancellation(asyncio.get_running_loop().create_future())
        return [*background_tasks(running), asyncio.create_task(stubborn, name="stubborn-task")]

    app._background_tasks = with_a_stubborn_task
    Memory.history_window = stubborn_history
    return cli.main(["serve", *serve_args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
