"""A pytest plugin that runs the OpenAI Agents SDK's own session tests (its tests/, unchanged)
with memoryd's MemorydSession swapped in for SQLiteSession (only the session under test
changes): SQLiteSession(session_id, db_path, session_settings) gives a MemorydSession on one
memoryd this plugin starts, one memoryd session per (db_path, session_id) (per instance for
":memory:", as SQLite's in-memory databases are), so tests stay apart as their files do.

Get the SDK's tests at the installed version (the sdist has them: `pip download --no-deps
--no-binary :all: openai-agents==VERSION`, or the repository's tag), then from its root:

    PYTHONPATH=/work/main/tools/framework_suites /work/main/.venv/bin/pytest \
      -p openai_agents_session_plugin -p no:cacheprovider -n 0 tests/memory/test_session.py ...

docs/INTEGRATIONS.md, "Frameworks' own suites", has the files, the counts and the reasons
for what does not pass."""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import agents
import agents.memory
import agents.memory.sqlite_session as sqlite_session

from memoryd_client import MemoryClient
from memoryd_client.openai_agents import MemorydSession

_work = Path(tempfile.mkdtemp(prefix="memoryd-agents-"))
_port = _work / "port"
_proc = subprocess.Popen(
    [
        str(Path(sys.executable).with_name("memoryd")),
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--http-listen",
        "off",
        "--data-dir",
        str(_work / "data"),
        "--port-file",
        str(_port),
        "--log-level",
        "warning",
    ],
    stdout=open(_work / "log", "wb"),  # noqa: SIM115 (the server's log, open for its life)
    stderr=subprocess.STDOUT,
    start_new_session=True,
)
try:
    while not (_port.exists() and _port.read_text().strip()):
        assert _proc.poll() is None, (_work / "log").read_text()[-3000:]
        time.sleep(0.1)
except BaseException:
    os.killpg(_proc.pid, 15)
    raise
TARGET = f"127.0.0.1:{_port.read_text().strip()}"
_client = MemoryClient(TARGET)  # made where no loop runs: a channel per loop on first use
_ids: dict[tuple[str, str], str] = {}


def pytest_unconfigure(config: Any) -> None:
    os.killpg(_proc.pid, 15)
    _proc.wait(30)
    shutil.rmtree(_work, ignore_errors=True)


def _memoryd_id(db_path: Any, session_id: str) -> str:
    if str(db_path) == ":memory:":
        return f"sdk-{uuid.uuid4().hex}"
    return _ids.setdefault((str(db_path), session_id), f"sdk-{uuid.uuid4().hex}")


class Session(MemorydSession):
    """SQLiteSession's constructor, a MemorydSession underneath; `close` is SQLiteSession's
    (a memoryd session holds no connection of its own to close)."""

    def __init__(self, session_id: str, db_path: Any = ":memory:", session_settings: Any = None) -> None:
        super().__init__(_memoryd_id(db_path, session_id), _client, session_settings=session_settings)

    def close(self) -> None:
        pass


agents.SQLiteSession = Session  # type: ignore[misc, assignment]
agents.memory.SQLiteSession = Session  # type: ignore[misc, assignment]
sqlite_session.SQLiteSession = Session  # type: ignore[misc, assignment]
