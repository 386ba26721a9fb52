"""The fault-injecting proxy of tests/clients/live.py as a process, for the Go,
TypeScript and Java client tests (their calls choose faults by header).

    python -m tests.clients.fault_proxy --upstream 127.0.0.1:PORT --port-file FILE

Writes its own port to FILE once serving; runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path

from tests.clients.live import FaultProxy


async def serve(upstream: str, port_file: Path) -> None:
    proxy = FaultProxy(upstream)
    await proxy.start()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    partial = port_file.with_suffix(".partial")
    partial.write_text(str(proxy.port))
    partial.rename(port_file)  # readers never see a half-written port
    await stop.wait()
    await proxy.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="host:port of the memoryd server")
    parser.add_argument("--port-file", required=True, type=Path)
    args = parser.parse_args()
    asyncio.run(serve(args.upstream, args.port_file))


if __name__ == "__main__":
    main()
