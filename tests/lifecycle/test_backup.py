"""docs/OPERATIONS.md's backup of a running embedded server, its commands run as written: the
restored data dir answers every read RPC as the server did when it was backed up."""

from __future__ import annotations

import shlex
from pathlib import Path

import grpc

from tests.lifecycle.api import INDEXED_PER_SESSION, Stubs, fill_user, indexed, read_everything
from tests.processes import MemorydServer, ServerProcess, memoryd_executable
from tests import processes

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "OPERATIONS.md"


def section_commands(heading: str) -> list[str]:
    """The shell commands of the docs section under `heading`, one per line."""
    section = OPERATIONS.read_text().split(heading + "\n", 1)[1].split("\n#", 1)[0]
    return [
        line
        for block in section.split("```sh\n")[1:]
        for line in block.split("```", 1)[0].splitlines()
        if line.strip()
    ]


async def shell(command: str, cwd: Path) -> None:
    path = f"{Path(memoryd_executable()).parent}:/usr/bin:/bin"
    process = await processes.shell_async(command, cwd=cwd, env={"PATH": path})
    assert await process.wait() == 0, command


async def test_the_documented_backup_of_a_running_embedded_server_restores_it(tmp_path):
    backup, serve_restored = section_commands("### A running embedded server")[:-1], section_commands(
        "### A running embedded server"
    )[-1]
    assert shlex.split(serve_restored) == ["memoryd", "serve", "--data-dir", "restored"]
    server = MemorydServer(tmp_path, "--qdrant-timeout-seconds", "30")  # its data dir: tmp_path / "data"
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stubs = Stubs.on(channel)
            written = await fill_user(stubs, "ann", "zebra", 90.0) + await fill_user(stubs, "bob", "walrus", 0.0)
            await indexed(stubs, 4 * INDEXED_PER_SESSION)
            before = await read_everything(stubs, written, search=False)
            for command in backup:  # while the server serves
                await shell(command, tmp_path)
    finally:
        server.terminate()
    restored = ServerProcess(
        [memoryd_executable(), *shlex.split(serve_restored)[1:], "--listen", "127.0.0.1:0", "--http-listen", "off"],
        tmp_path,
        name="restored",
        cwd=tmp_path,
    )
    restored.start()
    try:
        async with grpc.aio.insecure_channel(restored.target) as channel:
            assert await read_everything(Stubs.on(channel), written, search=False) == before
    finally:
        restored.terminate()
