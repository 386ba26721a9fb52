"""A conftest.py that runs LangGraph's own SQLite store tests (libs/checkpoint-sqlite/tests,
unchanged) with memoryd's MemorydStore swapped in for SqliteStore / AsyncSqliteStore (only
the store under test changes): each from_conn_string() gives a MemorydStore of its own root
on one memoryd this conftest starts. Copy it as conftest.py beside copies of their
test_store.py and test_async_store.py, then:

    LANGGRAPH=PATH/TO/langgraph SQLITE_VEC_PATH=DIR/WITH/sqlite_vec \
      .venv/bin/pytest -p no:cacheprovider -o asyncio_mode=auto -c /dev/null --rootdir=. test_store.py test_async_store.py

(their package imports sqlite_vec: `pip install --target DIR sqlite-vec`). docs/INTEGRATIONS.md,
"Frameworks' own suites", has the counts."""
import asyncio, os, subprocess, sys, tempfile, time, uuid
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

sys.path[:0] = [os.path.join(os.environ["LANGGRAPH"], "libs", "checkpoint-sqlite"), *filter(None, [os.environ.get("SQLITE_VEC_PATH")])]
import langgraph.store.sqlite as sqlite_module  # noqa: E402
from memoryd_client import MemoryClient, SyncMemoryClient  # noqa: E402
from memoryd_client.langgraph import MemorydStore  # noqa: E402

_work = Path(tempfile.mkdtemp())
_port = _work / "port"
_proc = subprocess.Popen(
    [str(Path(sys.executable).with_name("memoryd")), "serve", "--listen", "127.0.0.1:0", "--http-listen", "off",
     "--data-dir", str(_work / "data"), "--port-file", str(_port), "--log-level", "warning"],
    stdout=open(_work / "log", "wb"), stderr=subprocess.STDOUT, start_new_session=True,
)
while not (_port.exists() and _port.read_text().strip()):
    assert _proc.poll() is None, (_work / "log").read_text()[-3000:]
    time.sleep(0.1)
TARGET = f"127.0.0.1:{_port.read_text().strip()}"
_sync = SyncMemoryClient(TARGET)


def pytest_unconfigure(config):
    os.killpg(_proc.pid, 15)
    _proc.wait(30)


def _index(index):
    if index and "text_fields" in index:
        index = {**index, "fields": index["text_fields"]}
    return index


class Store(MemorydStore):
    MIGRATIONS = sqlite_module.SqliteStore.MIGRATIONS

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string, *, index=None, ttl=None, **kwargs):
        yield cls(_sync, root=f"lgt-{uuid.uuid4().hex[:10]}.", index=_index(index), ttl=ttl)

    def setup(self):
        pass


class AsyncStore(MemorydStore):
    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string, *, index=None, ttl=None, **kwargs):
        client = MemoryClient(TARGET)
        try:
            yield cls(client, root=f"lgt-{uuid.uuid4().hex[:10]}.", index=_index(index), ttl=ttl)
        finally:
            await client.close()

    async def setup(self):
        pass


sqlite_module.SqliteStore = Store
sqlite_module.AsyncSqliteStore = AsyncStore
