"""In-process wake-ups for watchers, so live tailing never busy-loops."""

from __future__ import annotations

import asyncio
import time


class EventNotifier:
    """Wakes every waiter whenever a store commits events.

    Waiters re-read the log after waking; the notifier carries no data, so a missed
    wake-up can only delay delivery, never lose an event.
    """

    def __init__(self) -> None:
        self._changed = asyncio.Event()
        self._last = float("-inf")

    def notify(self) -> None:
        self._last = time.monotonic()
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def notified_within(self, seconds: float) -> bool:
        """Whether a commit woke the waiters in the last `seconds`: writes are going on."""
        return time.monotonic() - self._last < seconds

    def current(self) -> asyncio.Event:
        """Take this before reading the log, then wait on it: a commit that lands
        between the read and the wait still wakes the waiter."""
        return self._changed
