"""A real Qdrant server for the tests (the production vector store), never a stand-in.

Where it comes from, the first that applies:
- $MEMORYD_TEST_QDRANT_URL (its REST URL) with $MEMORYD_TEST_QDRANT_GRPC_PORT (its gRPC
  port, default 6334): a server already running; the tests only create and drop their own
  collections there.
- $MEMORYD_TEST_QDRANT_BIN, else `../shared/bin/qdrant` beside the repository: the binary,
  started once per test session (the first time a test asks for `qdrant_server`) on free
  loopback ports, REST and gRPC both chosen here, with an empty scratch working dir (Qdrant
  reads config/*.yaml from its working dir) and its storage in a temp dir, in memory
  (/dev/shm) where there is one: on disk every collection and payload index Qdrant creates
  waits for fsyncs, 20x slower here, and nothing in the tests outlives the process. It
  is stopped when the session ends (and by the kernel if pytest dies first).
- Neither: every server case is skipped, with one line saying why.

Suites parametrize over SERVER_TARGETS, the two transports memoryd speaks to a server
(`--qdrant-grpc-port P`, and `0`: REST only), and give every test its own collection prefix.
Tests take the function-scoped `qdrant`, which drops the collections a test made when it
ends, so the server stays small however many tests run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memoryd.workers import signal_on_parent_death
from tests import processes
from tests.conftest import free_port

URL_ENV = "MEMORYD_TEST_QDRANT_URL"
GRPC_PORT_ENV = "MEMORYD_TEST_QDRANT_GRPC_PORT"
BIN_ENV = "MEMORYD_TEST_QDRANT_BIN"
SHARED_BIN = Path(__file__).resolve().parents[1] / ".." / "shared" / "bin" / "qdrant"
STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
MEMORY_DIR = Path("/dev/shm")
STORAGE_PREFIX = "memoryd-test-qdrant-"

# The transports of memoryd's server adapter: gRPC (the default) and REST.
SERVER_TARGETS = ["server-grpc", "server-rest"]


@dataclass(frozen=True, slots=True)
class QdrantEndpoint:
    url: str  # REST
    grpc_port: int

    def settings(self, target: str) -> dict:
        """memoryd's Config settings for this server over the target's transport, with a
        collection prefix of their own."""
        return dict(
            qdrant_url=self.url,
            qdrant_grpc_port=self.grpc_port if target == "server-grpc" else 0,
            qdrant_collection_prefix=collection_prefix(),
        )

    def flags(self, target: str = "server-grpc") -> list[str]:
        """The same as `memoryd serve` flags."""
        return [f"--{key.replace('_', '-')}={value}" for key, value in self.settings(target).items()]

    def collections(self) -> set[str]:
        """The tests' collections on the server (those of a collection_prefix())."""
        names = (c["name"] for c in self._rest("GET", "/collections")["result"]["collections"])
        return {name for name in names if OUR_COLLECTION.fullmatch(name)}

    def drop(self, name: str) -> None:
        self._rest("DELETE", f"/collections/{name}")

    def _rest(self, method: str, path: str) -> dict:
        with urllib.request.urlopen(urllib.request.Request(self.url + path, method=method), timeout=30) as response:
            return json.loads(response.read())


def collection_prefix() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


# The collections of a collection_prefix(): the only ones the tests ever drop.
OUR_COLLECTION = re.compile(r"t[0-9a-f]{10}_.+")


def binary() -> Path | None:
    explicit = os.environ.get(BIN_ENV)
    if explicit:
        return Path(explicit)
    return SHARED_BIN.resolve() if SHARED_BIN.exists() else None


def unavailable() -> str | None:
    """Why this run has no Qdrant server (None: it has one)."""
    if os.environ.get(URL_ENV):
        return None
    found = binary()
    if found is None:
        return (
            f"no Qdrant server: {SHARED_BIN.resolve()} not found; set {BIN_ENV} to a qdrant binary, "
            f"or {URL_ENV} (and {GRPC_PORT_ENV}) to a running server (docs/VECTORS.md, Tests)"
        )
    if not os.access(found, os.X_OK):
        return f"no Qdrant server: {BIN_ENV}={found} is not an executable file"
    return None


class QdrantServer:
    """One `qdrant` process on free loopback ports; its log and working dir under
    `directory`, its storage in a temp dir of its own (removed by stop())."""

    def __init__(self, executable: Path, directory: Path) -> None:
        self.executable = executable
        self.directory = directory
        self.log_path = directory / "qdrant.log"
        self.storage = _storage_dir(directory)
        self.http_port = 0
        self.grpc_port = 0
        self._process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> QdrantEndpoint:
        return QdrantEndpoint(f"http://127.0.0.1:{self.http_port}", self.grpc_port)

    def start(self, attempts: int = 3) -> QdrantEndpoint:
        """Start it and wait until /readyz answers; a port taken between choosing it and
        Qdrant binding it is another attempt on other ports."""
        for attempt in range(attempts):
            try:
                self._start_once()
                return self.endpoint
            except PortTaken:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def _start_once(self) -> None:
        self.http_port = free_port()
        self.grpc_port = free_port()
        while self.grpc_port == self.http_port:
            self.grpc_port = free_port()
        workdir = self.directory / "cwd"  # empty: no config/*.yaml to pick up
        workdir.mkdir(parents=True, exist_ok=True)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("QDRANT__")},
            "QDRANT__SERVICE__HOST": "127.0.0.1",
            "QDRANT__SERVICE__HTTP_PORT": str(self.http_port),
            "QDRANT__SERVICE__GRPC_PORT": str(self.grpc_port),
            "QDRANT__STORAGE__STORAGE_PATH": str(self.storage / "storage"),
            "QDRANT__STORAGE__SNAPSHOTS_PATH": str(self.storage / "snapshots"),
            "QDRANT__TELEMETRY_DISABLED": "true",
            "QDRANT__LOG_LEVEL": "WARN",
        }
        with self.log_path.open("ab") as log:
            self._process = processes.popen(
                [str(self.executable)], cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                preexec_fn=signal_on_parent_death,
            )  # fmt: skip
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not self._ready():
            if self._process.poll() is not None:
                log_text = self.log_path.read_text(errors="replace")[-4000:]
                self._process = None
                if "Address already in use" in log_text:
                    raise PortTaken(log_text)
                raise RuntimeError(f"{self.executable} exited at start; its log ({self.log_path}):\n{log_text}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.executable} not ready within {STARTUP_TIMEOUT} s; see {self.log_path}")
            time.sleep(0.1)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.endpoint.url}/readyz", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def stop(self) -> None:
        """SIGTERM (a clean shutdown), then SIGKILL if it lingers; then its storage goes."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(STOP_TIMEOUT)
        shutil.rmtree(self.storage, ignore_errors=True)


def _storage_dir(fallback_parent: Path) -> Path:
    """A fresh dir in memory when the machine has /dev/shm (else under `fallback_parent`),
    named after this process; those of test runs that died without stopping their server
    (their pid gone) are removed first, since memory does not clear itself."""
    if not (MEMORY_DIR.is_dir() and os.access(MEMORY_DIR, os.W_OK)):
        return Path(tempfile.mkdtemp(prefix=STORAGE_PREFIX, dir=fallback_parent))
    for stale in MEMORY_DIR.glob(f"{STORAGE_PREFIX}*"):
        pid = stale.name.removeprefix(STORAGE_PREFIX).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{STORAGE_PREFIX}{os.getpid()}-", dir=MEMORY_DIR))


class PortTaken(RuntimeError):
    pass


_running: QdrantEndpoint | None = None
_used: str | None = None  # what this session's server cases ran against, for the summary


@pytest.fixture(scope="session")
def qdrant_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QdrantEndpoint]:
    """The session's Qdrant server (skips the test when there is none, see the module)."""
    global _running, _used
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    if os.environ.get(URL_ENV):
        _running = QdrantEndpoint(os.environ[URL_ENV].rstrip("/"), int(os.environ.get(GRPC_PORT_ENV) or 6334))
        _used = f"{_running.url} (gRPC port {_running.grpc_port})"
        yield _running
        _running = None
        return
    executable = binary()
    assert executable is not None
    server = QdrantServer(executable, tmp_path_factory.mktemp("qdrant"))
    try:
        _running = server.start()
        _used = f"{executable}, started on {_running.url} (gRPC port {_running.grpc_port})"
        yield _running
    finally:
        _running = None
        server.stop()


@pytest.fixture
def qdrant(qdrant_server: QdrantEndpoint) -> Iterator[QdrantEndpoint]:
    """The session's server for one test: the collections the test made are dropped after it."""
    before = qdrant_server.collections()
    yield qdrant_server
    for name in qdrant_server.collections() - before:
        qdrant_server.drop(name)


def running() -> QdrantEndpoint:
    """The server of `qdrant_server`, for helpers that build a client or a Config from a
    target name; the fixture (through the `target` fixtures) must have started it."""
    if _running is None:
        raise RuntimeError("no Qdrant server in this test: request the qdrant fixture (or a server target)")
    return _running


def pytest_terminal_summary(terminalreporter) -> None:
    """One line, even under -q: which server the server cases ran against, or that they
    were skipped and why."""
    reason = unavailable()
    if reason:
        skipped = [r for r in terminalreporter.stats.get("skipped", []) if reason in str(r.longrepr)]
        if skipped:
            terminalreporter.write_line(f"{len(skipped)} Qdrant-server cases skipped, {reason}")
    elif _used is not None:
        terminalreporter.write_line(f"Qdrant-server cases ran against {_used}")
    else:  # under pytest-xdist the servers ran in the workers: say what they were started from
        ran = [r for r in terminalreporter.stats.get("passed", []) if "[server-" in r.nodeid]
        if ran:
            source = os.environ.get(URL_ENV) or binary()
            terminalreporter.write_line(f"{len(ran)} Qdrant-server cases ran against {source}")
