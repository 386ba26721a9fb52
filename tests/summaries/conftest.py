"""Summaries, context assembly and long-term entries on every storage adapter.

Like the conformance suite, with tests/conftest.py's fixtures: one store per adapter per
test session (`store`, opened from `store_target`, which also re-opens it on the same data,
as after a restart), a fresh tenant per test.
"""

from __future__ import annotations

import pytest

from memoryd.domain.entries import Entries
from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory
from memoryd.domain.summaries import Summaries

LIMITS = Limits()


@pytest.fixture
def memory(store) -> Memory:
    return Memory(store, LIMITS)


@pytest.fixture
def summaries(store) -> Summaries:
    return Summaries(store, LIMITS)


@pytest.fixture
def entries(store) -> Entries:
    return Entries(store, LIMITS, capacity=5)
