"""The way from the embedded default to MongoDB and a Qdrant server, and back, with the commands
a user runs (docs/OPERATIONS.md): every read RPC answers the same on each side."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import uuid
from dataclasses import replace

import grpc
import pytest

from memoryd.config import Config
from tests.conftest import mongo_targets, mongo_uri_for
from tests.lifecycle.api import INDEXED_PER_SESSION, Stubs, fill_user, indexed, read_everything
from tests.processes import MemorydServer, memoryd_executable

QDRANT_URL_ENV = "MEMORYD_TEST_QDRANT_URL"


async def memoryd(*args: str, shell: str = "") -> list[dict]:
    """Run `memoryd ARGS` (or a shell pipeline of memoryd commands); its stderr as JSON lines."""
    if shell:
        process = await asyncio.create_subprocess_shell(
            shell, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
    else:
        process = await asyncio.create_subprocess_exec(
            memoryd_executable(), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
    out, err = await process.communicate()
    logs = [json.loads(line) for line in err.decode().splitlines() if line.strip()]
    assert process.returncode == 0, logs
    return logs


def event(logs: list[dict], name: str) -> dict:
    return next(line for line in logs if line["event"] == name)


def target_config(tmp_path, **settings) -> Config:
    """A server config on its own data: the vector index in a Qdrant server (the one at
    $MEMORYD_TEST_QDRANT_URL, else qdrant-client's in-process stand-in)."""
    return Config(
        listen="127.0.0.1:0",
        http_listen="off",
        data_dir=tmp_path / f"data-{uuid.uuid4().hex[:8]}",
        qdrant_url=os.environ.get(QDRANT_URL_ENV, ":memory:"),
        qdrant_collection_prefix=f"m{uuid.uuid4().hex[:8]}",
        qdrant_timeout_seconds=30.0,
        **settings,
    )


@pytest.mark.parametrize("mongo", mongo_targets())
async def test_an_embedded_deployment_moves_to_mongodb_and_back(serve, tmp_path, request, mongo):
    # 1. The embedded default, filled through the API by a running `memoryd serve`.
    server = MemorydServer(tmp_path / "embedded", "--qdrant-timeout-seconds", "30")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stubs = Stubs.on(channel)
            written = await fill_user(stubs, "ann", "zebra", 90.0, big=True) + await fill_user(stubs, "bob", "walrus", 0.0)
            await indexed(stubs, 4 * INDEXED_PER_SESSION + 1)
            source = await read_everything(stubs, written, search=False)
            assert len(source["GetFullHistory ann-s0"]) == 7 and len(source["ListMetadata memoryd."]) == 11
        # 2. Exported while it serves (a snapshot: it may go on writing).
        export = tmp_path / "memoryd.jsonl"
        logs = await memoryd("export", "--data-dir", str(server.data_dir), "--output", str(export))
    finally:
        server.terminate()
    done = event(logs, "export_done")
    assert (done["sessions"], done["messages"]) == (4, 4 * 6 + 1)
    assert json.loads(export.open("rb").readline())["version"] == 1

    # 3. Imported into MongoDB, served there with a Qdrant server: the same answers.
    uri, database = mongo_uri_for(mongo, request), f"memoryd_moved_{uuid.uuid4().hex[:8]}"
    logs = await memoryd("import", "--mongodb-uri", uri, "--mongodb-database", database, "--input", str(export))
    assert event(logs, "import_done")["messages_written"] == done["messages"]
    async with serve("mongo", target_config(tmp_path, mongodb_uri=uri, mongodb_database=database)) as (_, stubs):
        assert await read_everything(stubs, written, search=False) == source

    # 4. And back into a fresh embedded data dir, piped: export to stdout, import from stdin.
    fresh = tmp_path / "fresh"
    pipeline = " | ".join(
        shlex.join([memoryd_executable(), *args])
        for args in (
            ["export", "--mongodb-uri", uri, "--mongodb-database", database],
            ["import", "--data-dir", str(fresh)],
        )
    )
    logs = await memoryd(shell=pipeline)
    assert event(logs, "import_done")["messages_written"] == done["messages"]
    async with serve("sqlite", replace(target_config(tmp_path), data_dir=fresh, qdrant_url="")) as (_, stubs):
        assert await read_everything(stubs, written, search=False) == source
