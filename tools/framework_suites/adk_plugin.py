"""A pytest plugin that runs Google ADK's own tests (its tests/unittests, unchanged) with
memoryd's services swapped in (only the service under test changes):

- `SqliteSessionService(db_path)` gives a MemorydSessionService, one memoryd prefix per
  db_path (per test: each uses its tmp_path), so the `SQLITE` cases of
  tests/unittests/sessions/test_session_service.py run on memoryd;
- `InMemoryMemoryService()` gives a MemorydMemoryService of its own prefix, so
  tests/unittests/memory/test_in_memory_memory_service.py runs on memoryd.

ADK's tests are not in its wheel or sdist; docs/INTEGRATIONS.md, "Frameworks' own suites",
says which version of them was run, the command, the counts and why what fails fails:

    PYTHONPATH=/work/main/tools/framework_suites /work/main/.venv/bin/pytest -p adk_plugin \
      -p no:cacheprovider -n 0 -o asyncio_mode=auto -c /dev/null --rootdir=. tests/unittests/...
"""

from __future__ import annotations

import uuid
from typing import Any

import google.adk.memory.in_memory_memory_service as in_memory_memory_service
import google.adk.sessions.sqlite_session_service as sqlite_session_service
from memoryd_server import Server

from memoryd_client import MemoryClient
from memoryd_client.adk import MemorydMemoryService, MemorydSessionService

_server = Server()
_client = MemoryClient(_server.target)  # made where no loop runs: a channel per loop on first use
_prefixes: dict[str, str] = {}


def pytest_unconfigure(config: Any) -> None:
    _server.stop()


class SessionService(MemorydSessionService):
    """SqliteSessionService's constructor, a MemorydSessionService underneath."""

    def __init__(self, db_path: str) -> None:
        super().__init__(_client, prefix=_prefixes.setdefault(str(db_path), f"adk-{uuid.uuid4().hex[:12]}"))


class MemoryService(MemorydMemoryService):
    """InMemoryMemoryService's constructor, a MemorydMemoryService underneath."""

    def __init__(self) -> None:
        super().__init__(_client, prefix=f"adkm-{uuid.uuid4().hex[:12]}")


sqlite_session_service.SqliteSessionService = SessionService  # type: ignore[misc, assignment]
in_memory_memory_service.InMemoryMemoryService = MemoryService  # type: ignore[misc, assignment]
