"""The caller's deadline, carried to storage calls (Python does not propagate it).

The transport sets it per call; adapters bound their I/O by `remaining()` so that a
dead store answers UNAVAILABLE before the caller's deadline instead of hanging.
"""

from __future__ import annotations

import contextvars
import time
from typing import overload

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("memoryd_deadline", default=None)


def set_remaining(seconds: float | None) -> contextvars.Token:
    return _deadline.set(None if seconds is None else time.monotonic() + seconds)


def reset(token: contextvars.Token) -> None:
    _deadline.reset(token)


@overload
def remaining(default: float) -> float: ...
@overload
def remaining(default: None = None) -> float | None: ...
def remaining(default: float | None = None) -> float | None:
    """Seconds left before the caller's deadline (never below zero), or `default`."""
    deadline = _deadline.get()
    if deadline is None:
        return default
    return max(0.0, deadline - time.monotonic())
