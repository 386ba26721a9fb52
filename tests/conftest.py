"""Shared fixtures: a real MongoDB-wire server for the MongoDB adapter, never a mock.

The server is SecantusDB (PyPI `secantusdb`, in the `test` extras): a WiredTiger-based,
MongoDB-compatible server that advertises itself as a single-node replica set, so
transactions and change streams work. It starts lazily, once per test session, the first
time a test asks for `mongo_uri`; SQLite-only runs never start it.

MongoDB targets:
- "mongo": the session's SecantusDB process (always).
- "mongo-external": the server at $MEMORYD_TEST_MONGODB_URI, when that variable is set
  (e.g. a real `mongod --replSet rs0`). Parametrize over `mongo_targets()` and resolve
  with `mongo_uri_for(target, request)` to run a test against both.

Fault-injection tests use the `secantus` factory fixture to get a private server they
may stop and start again on the same port and data directory; stopping the shared one
would break every other test.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pymongo
import pytest

from tests import processes

# The session's real Qdrant server (fixture `qdrant_server`, tests/qdrant_server.py).
pytest_plugins = ["tests.qdrant_server"]


# Processes: tests start them through tests/processes.py, each leading a process group of its
# own; these hooks kill the groups a test (or a function-scoped fixture) started when it ends,
# however it ends (pytest-timeout's signal raises in the test: teardown still runs), and every
# group still running at the end of the session. A plugin, not conftest hooks: a conftest's
# pytest_fixture_setup is not called for the session-scoped fixtures (their node is the session).
class ProcessGroups:
    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: pytest.FixtureDef, request: pytest.FixtureRequest):
        processes.owners.append(fixturedef.scope)
        try:
            return (yield)
        finally:
            processes.owners.pop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None):
        try:
            return (yield)
        finally:
            processes.kill_groups("function")

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        processes.kill_groups()
        if not config.pluginmanager.has_plugin("dsession"):  # not xdist's controller (its children: workers)
            # What servers started in this process (an engine, workers) left behind.
            for pid in processes.descendants(os.getpid()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(ProcessGroups(), "memoryd-process-groups")

EXTERNAL_URI_ENV = "MEMORYD_TEST_MONGODB_URI"
STARTUP_TIMEOUT = 60.0


def mongo_targets() -> list[str]:
    """MongoDB targets this run covers: "mongo" (SecantusDB) plus "mongo-external" when configured."""
    return ["mongo"] + (["mongo-external"] if os.environ.get(EXTERNAL_URI_ENV) else [])


def mongo_uri_for(target: str, request: pytest.FixtureRequest) -> str:
    if target == "mongo-external":
        return os.environ[EXTERNAL_URI_ENV]
    return request.getfixturevalue("mongo_uri")


# Every storage backend a run covers; suites parametrize over these and nothing else.
BACKENDS = ["sqlite", *mongo_targets()]


MONGODB_FIXTURES = {"mongo_uri", "secantus_server", "secantus"}


def _uses_mongodb(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec else ()
    return (
        item.get_closest_marker("mongo") is not None
        or any(isinstance(value, str) and value.startswith("mongo") for value in params)
        or "mongo" in item.name
        or not MONGODB_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """scripts/test runs the suite on two pytest-xdist workers (`--dist loadgroup`). The
    MongoDB cases go to one of them, one after another: SecantusDB is a Python server that
    takes a core when busy, and two workers' MongoDB cases at once (two servers) would slow
    each other past the adapter's 5 s call timeout; a test with a private SecantusDB of its own
    (`secantus`) goes there too. Without xdist the mark does nothing."""
    for item in items:
        if _uses_mongodb(item):
            item.add_marker(pytest.mark.xdist_group("mongodb"))


class StoreTarget:
    """How to open (and re-open, as after a restart) the store of one backend, on its own data."""

    def __init__(self, backend: str, request: pytest.FixtureRequest, directory: Path, name: str = "memoryd") -> None:
        self.backend = backend
        self.sqlite_path = directory / "memoryd.db"
        self.mongo_uri = None if backend == "sqlite" else mongo_uri_for(backend, request)
        self.database = f"{name}_{uuid.uuid4().hex[:8]}"

    async def open(self):
        if self.backend == "sqlite":
            from memoryd.storage.sqlite.store import SqliteStore

            store = SqliteStore(self.sqlite_path)
        else:
            from memoryd.storage.mongo.store import MongoStore

            store = MongoStore(self.mongo_uri, database=self.database)
        await store.open()
        return store


@pytest.fixture(scope="session", params=BACKENDS)
def store_target(request, tmp_path_factory) -> StoreTarget:
    """One store per backend per test session (tests keep apart by tenant)."""
    return StoreTarget(request.param, request, tmp_path_factory.mktemp(request.param), "memoryd_tests")


@pytest.fixture(scope="session")
async def store(store_target):
    store = await store_target.open()
    yield store
    await store.close()


@pytest.fixture
def tenant() -> str:
    """A fresh tenant per test: tests never see each other's data, no cleanup needed."""
    return f"t-{uuid.uuid4().hex[:12]}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_port_pair() -> int:
    """A free port P whose neighbour P + 1 is free too: where memoryd's default HTTP port
    (`--http-listen auto`, gRPC port + 1) goes when a test fixes the gRPC port."""
    while True:
        port = free_port()
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port


def secantus_executable() -> str:
    beside_python = Path(sys.executable).with_name("secantusd-py")
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("secantusd-py")
    if found is None:
        pytest.fail("secantusd-py not found: install the test extras (pip install -e '.[test]')")
    return found


class SecantusServer:
    """One SecantusDB process; stop() and start() keep its port and data directory."""

    def __init__(self, data_dir: Path, port: int | None = None, *, standalone: bool = False) -> None:
        self.data_dir = Path(data_dir)
        self.port = port or free_port()
        self.standalone = standalone
        self.log_path = self.data_dir.with_name(self.data_dir.name + ".log")
        self._process: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/?directConnection=true"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        if self.running:
            return
        command = [
            secantus_executable(),
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--storage-path", str(self.data_dir),
            "--log-level", "WARNING",
        ]
        if self.standalone:
            command.append("--standalone")
        with open(self.log_path, "ab") as log:
            self._process = processes.popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self._wait_until_ready()

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            if self._process is not None and self._process.poll() is not None:
                raise RuntimeError(f"secantusd-py exited with {self._process.returncode}; see {self.log_path}")
            client = pymongo.MongoClient(self.uri, serverSelectionTimeoutMS=500, connectTimeoutMS=500)
            try:
                client.admin.command("hello")
                return
            except pymongo.errors.PyMongoError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"secantusd-py did not answer hello on port {self.port}; see {self.log_path}"
                    ) from None
                time.sleep(0.2)
            finally:
                client.close()

    def stop(self, *, kill: bool = False) -> None:
        """Terminate (or kill -9) the process; start() brings it back with the same data."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        if kill:
            process.kill()
        else:
            process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)

    def restart(self) -> None:
        self.stop()
        self.start()

    def pause(self) -> None:
        """SIGSTOP: connections stay open and nothing answers (a hung server, not a dead one).

        kill() only queues the signal; returns once the kernel reports the process stopped,
        so a request sent after pause() can never be answered by a process still running."""
        assert self._process is not None
        self._process.send_signal(signal.SIGSTOP)
        stat = Path(f"/proc/{self._process.pid}/stat")
        deadline = time.monotonic() + 10
        # Field 3 of /proc/<pid>/stat, after the parenthesised command name, is the state.
        while stat.read_text().rpartition(")")[2].split()[0] not in ("T", "t"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"secantusd-py (pid {self._process.pid}) did not stop after SIGSTOP")
            time.sleep(0.001)

    def resume(self) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGCONT)


@pytest.fixture(scope="session")
def secantus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecantusServer]:
    """The session's shared SecantusDB server. Do not stop it: use `secantus` for that."""
    server = SecantusServer(tmp_path_factory.mktemp("secantus") / "data")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def mongo_uri(secantus_server: SecantusServer) -> str:
    """URI of the shared SecantusDB server; give every test its own database or tenant."""
    return secantus_server.uri


@pytest.fixture
def secantus(tmp_path: Path) -> Iterator[Callable[..., SecantusServer]]:
    """Factory of private SecantusDB servers, stopped at the end of the test.

        server = secantus()                    # started, replica-set mode
        server.stop(); server.start()          # same port, same data
        plain = secantus(standalone=True)      # advertises a standalone server
    """
    servers: list[SecantusServer] = []

    def start(*, standalone: bool = False, port: int | None = None) -> SecantusServer:
        server = SecantusServer(tmp_path / f"secantus-{len(servers)}", port, standalone=standalone)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.stop()
