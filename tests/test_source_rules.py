"""Rules about the server's own source that a reviewer would otherwise have to remember."""

from __future__ import annotations

from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "server" / "memoryd"


def test_no_asyncio_wait_for_in_the_server():
    # Python 3.11's wait_for swallows a cancellation that arrives in the loop iteration in
    # which the awaited work completes (fixed in 3.12). A background loop that lost its
    # cancellation never ends, and App.stop() waited on one forever (a 1-in-10 hang at
    # shutdown in tests/events). asyncio.timeout() has no such window.
    offenders = [
        f"{path.relative_to(SERVER)}:{number}"
        for path in sorted(SERVER.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if "asyncio.wait_for(" in line
    ]
    assert offenders == [], offenders
