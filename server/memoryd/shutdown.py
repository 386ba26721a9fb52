"""Bounded shutdown: a stop that ends whatever a client, a task or a thread does.

Every step of a server's stop gets a time budget. A step still running past it is
abandoned: logged at warning with its name and left behind, and the stop goes on. The
process then exits at once (os._exit) instead of waiting, at interpreter exit, for the
threads and tasks the abandoned step left running (docs/ARCHITECTURE.md, "Stopping").

`asyncio.wait`, not `asyncio.timeout`, bounds each step: cancelling an awaited task waits
until it has ended, which never happens when the task swallows CancelledError.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Coroutine, Iterable
from typing import Any, TypeVar

import structlog

log = structlog.get_logger("memoryd.shutdown")

T = TypeVar("T")

# Each step after the listeners' grace (tasks, vectors, storage, the loop's own cleanup)
# gets this long; a healthy step takes milliseconds.
STEP_SECONDS = 2.0
# The embedded engine process gets this long to close its shards on a stop, then is killed
# (its acknowledged writes are in the WAL already); the vectors step waits for it, so the
# folder's lock is free when the stop ends and a restarted server finds it free.
ENGINE_STOP_SECONDS = 10.0
# The watchdog fires this many step budgets past the grace: more than all the steps of a
# stop and of the loop's cleanup together.
WATCHDOG_STEPS = 10


def raise_if_cancelled() -> None:
    """Raise CancelledError when a cancellation of the running task got lost on the way.

    Python 3.11's asyncio.wait_for returns its inner result when the cancellation arrives
    just as that completes, and PyMongo awaits its socket writes with it: a MongoDB call
    may return normally from a cancelled task, which then carries on. The count of pending
    cancellations still tells. Every background loop calls this once a turn.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class Steps:
    """The steps of one stop, each bounded; remembers the ones it had to abandon."""

    def __init__(self) -> None:
        self.abandoned: list[str] = []

    async def run(self, step: str, awaitable: Awaitable[Any], seconds: float = STEP_SECONDS) -> None:
        """Await `awaitable` for at most `seconds`, then stop waiting for it (it is not
        cancelled: gRPC's own stop keeps futures it must still resolve). A step that fails
        is logged, never raised: the steps after it still run."""
        task = asyncio.ensure_future(awaitable)
        await asyncio.wait({task}, timeout=seconds)
        if not task.done():
            task.add_done_callback(_retrieve)  # if it fails later, nothing to report then
            self._abandon(step, seconds)
        else:
            self._report_failure(step, task)

    async def cancel(self, step: str, tasks: Iterable[asyncio.Task], seconds: float = STEP_SECONDS) -> None:
        """Cancel `tasks` and wait at most `seconds` for them to end."""
        tasks = list(tasks)
        for task in tasks:
            task.cancel()
        if not tasks:
            return
        done, pending = await asyncio.wait(tasks, timeout=seconds)
        for task in done:
            self._report_failure(step, task)
        if pending:
            self._abandon(step, seconds, tasks=sorted(task.get_name() for task in pending))

    @staticmethod
    def _report_failure(step: str, task: asyncio.Future) -> None:
        if not task.cancelled() and task.exception() is not None:
            name = task.get_name() if isinstance(task, asyncio.Task) else step
            log.warning("shutdown_step_failed", step=step, task=name, error_type=type(task.exception()).__name__)

    def _abandon(self, step: str, seconds: float, **details: Any) -> None:
        self.abandoned.append(step)
        log.warning("shutdown_step_abandoned", step=step, waited_seconds=seconds, **details)


def _retrieve(task: asyncio.Future) -> None:
    if not task.cancelled():
        task.exception()


def run(main: Coroutine[Any, Any, T]) -> tuple[T, Steps]:
    """asyncio.run(main), with its cleanup bounded: the tasks still pending when `main`
    ends are cancelled, and the default executor shut down, by bounded steps."""
    loop = asyncio.new_event_loop()
    steps = Steps()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main), steps
    finally:
        try:
            leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
            loop.run_until_complete(steps.cancel("leftover_tasks", leftovers))
            loop.run_until_complete(steps.run("async_generators", loop.shutdown_asyncgens()))
            loop.run_until_complete(steps.run("default_executor", loop.shutdown_default_executor()))
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def exit_if_abandoned(abandoned: list[str], code: int) -> None:
    """After a stop that abandoned a step, end the process now with `code`: a normal exit
    would join the threads the step left running, which may never end."""
    if abandoned:
        log.warning("exiting_without_cleanup", abandoned=abandoned)
        _exit_now(code)


def start_watchdog(grace: float) -> None:
    """End the process (exit 1) if it is still stopping long after every step's bound: the
    steps bound what the event loop awaits, and only a thread can end a stop whose loop is
    itself blocked (a busy loop, a blocking call on the loop's thread)."""
    seconds = grace + WATCHDOG_STEPS * STEP_SECONDS

    def expire() -> None:
        log.warning("shutdown_deadline_passed", waited_seconds=seconds)
        _exit_now(1)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True  # a process that ends in time does not wait for it
    timer.start()


def _exit_now(code: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def signal_on_parent_death(signum: int = signal.SIGTERM) -> None:
    """Linux: have the kernel send `signum` to this process when its parent dies (a worker;
    the vector engine process). Elsewhere a no-op."""
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signum)
