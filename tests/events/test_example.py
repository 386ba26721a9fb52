"""examples/watch_deletions.py runs as documented against a running `memoryd serve`."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from tests import processes

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "watch_deletions.py"


@pytest.fixture
def backend() -> str:
    return "sqlite"


async def test_watch_deletions_example(servers):
    client = await servers.spawn()
    process = await processes.exec_async(
        sys.executable, str(EXAMPLE), "--target", client.target, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output, _ = await asyncio.wait_for(process.communicate(), 60)
    text = output.decode()
    assert process.returncode == 0, text
    assert text.count("messages deleted, timestamps") == 3
    assert "timestamps [3000]" in text and "timestamps [1000]" in text and "timestamps [2000]" in text
    assert "resuming after seq 5" in text and "seq 6: messages deleted" in text
    assert "history now: []" in text
