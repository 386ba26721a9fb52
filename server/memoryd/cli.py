"""`memoryd serve`: the entry point. Loads config once, configures logging, serves until signalled."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

import structlog

from memoryd import config as config_module
from memoryd import logs


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memoryd", description="Conversation memory for LLM agents over gRPC.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve gRPC (embedded SQLite unless a MongoDB URI is configured)")
    config_module.add_arguments(serve)
    return parser


async def serve(config: config_module.Config) -> None:
    from memoryd.app import start

    app = await start(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await app.stop()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    config = config_module.load(args)
    logs.configure(config.log_level)
    log = structlog.get_logger("memoryd")
    try:
        asyncio.run(serve(config))
    except OSError as error:
        log.error("startup_failed", error=str(error))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
