"""The storage conformance suite: every case runs against every adapter.

The adapters come from tests/conftest.py (`store`: opened once per backend per test
session; `tenant`: a fresh one per test, so tests never see each other's data).
"""

from __future__ import annotations

import pytest

from memoryd.domain.limits import Limits
from memoryd.domain.memory import Memory


@pytest.fixture
def memory(store) -> Memory:
    # Small batches so the batching paths run with modest data (SecantusDB is slow).
    return Memory(store, Limits(delete_batch=7, max_page_size=1000, max_recent_limit=1000))
