"""`memoryd serve`: the entry point. Loads config once, configures logging, serves until signalled."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

import structlog

from memoryd import addresses, allocator, lifecycle, logs, shutdown, workers
from memoryd import config as config_module


class _Parser(argparse.ArgumentParser):
    """Reports a bad command line as a JSON log line too: every stderr line is JSON (memoryd.logs).

    A command's usage line names its own arguments and then "[settings]" for the ~90 server
    settings it shares with `serve` (config.add_arguments), which its --help lists after its
    own options."""

    def _own_actions(self) -> list[argparse.Action]:
        settings = [g for g in self._action_groups if g.title == config_module.SETTINGS_TITLE]
        shared = {id(a) for g in settings for a in g._group_actions}
        return [a for a in self._actions if id(a) not in shared]

    def format_usage(self) -> str:
        formatter = self._get_formatter()
        own = self._own_actions()
        formatter.add_usage(self.usage, own, self._mutually_exclusive_groups)
        usage = formatter.format_help().rstrip("\n")
        return usage + (" [settings]" if len(own) < len(self._actions) else "") + "\n"

    def format_help(self) -> str:
        formatter = self._get_formatter()  # argparse's own format_help, with the usage above
        formatter.add_text(self.description)
        for group in self._action_groups:
            formatter.start_section(group.title)
            formatter.add_text(group.description)
            formatter.add_arguments(group._group_actions)
            formatter.end_section()
        formatter.add_text(self.epilog)
        return self.format_usage() + "\n" + formatter.format_help()

    def error(self, message: str):
        logs.configure("info")
        structlog.get_logger("memoryd").error(
            "usage_error", error=f"{self.prog}: {message}", usage=self.format_usage().strip()
        )
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="memoryd", description="Conversation memory for LLM agents over gRPC.")
    parser.add_argument("--version", action="version", version=f"memoryd {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve gRPC (embedded SQLite unless a MongoDB URI is configured)")
    config_module.add_arguments(serve)
    health = commands.add_parser(
        "health", help="exit 0 when the memoryd these settings describe is SERVING (a container HEALTHCHECK)"
    )
    config_module.add_arguments(health)
    lifecycle.add_commands(commands)
    # The MCP server is a client of memoryd and lives in memoryd-client; its own parser reads the rest.
    mcp = commands.add_parser(
        "mcp", add_help=False, help="serve the Model Context Protocol over stdio or HTTP (memoryd mcp --help)"
    )
    mcp.add_argument("mcp_args", nargs=argparse.REMAINDER)
    return parser


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("memoryd")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def health(config: config_module.Config) -> int:
    from memoryd.transport import health_probe

    status = health_probe.check(config)
    log = structlog.get_logger("memoryd.health")
    (log.info if status == "SERVING" else log.error)("health", status=status, target=health_probe.target(config))
    return 0 if status == "SERVING" else 1


def mcp(argv: list[str]) -> int:
    """`memoryd mcp ...`: memoryd_client.mcp_server, installed with memoryd-client's mcp extra."""
    from memoryd_client.extras import mcp_main

    def refuse(line: str) -> None:  # a JSON log line, as every other refusal of this command
        logs.configure("info")
        structlog.get_logger("memoryd").error("startup_refused", error=line)

    return mcp_main(argv, prog="memoryd mcp", refuse=refuse)


async def serve(config: config_module.Config, *, worker_index: int = 0, started=None) -> list[str]:
    """Serve until SIGTERM/SIGINT, then stop; returns the stop steps it had to abandon."""
    from memoryd.app import start

    # The handlers go in before anything starts: a signal during start-up waits for the
    # start to finish and then stops the server, instead of killing a half-started process.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    app = None
    # SIGHUP re-reads the tokens now (docs/SECURITY.md, "Rotation"); during start-up there is
    # nothing to re-read yet (start reads them).
    loop.add_signal_handler(signal.SIGHUP, lambda: app.reload_credentials() if app is not None else None)
    workers.accept_stop_signals()
    app = await start(config, reuse_port=started is not None, worker_index=worker_index)
    if started is not None:
        started()
    await stop.wait()
    shutdown.start_watchdog(app.config.grace_seconds)
    return await app.stop()


def run_server(config: config_module.Config, **serve_options) -> int:
    """Serve `config` in this process; returns its exit code (1 when it could not bind)."""
    allocator.manage()  # here, not before --workers forks: each process trims its own arenas
    try:
        abandoned, cleanup = shutdown.run(serve(config, **serve_options))
    except OSError as error:
        structlog.get_logger("memoryd").error("startup_failed", error=str(error))
        return 1
    shutdown.exit_if_abandoned([*abandoned, *cleanup.abandoned], 0)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mcp"]:  # before argparse, which would take the MCP server's own options
        return mcp(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        config = config_module.load(args)
    except ValueError as error:  # a malformed or out-of-bounds setting, a listen address not host:port
        logs.configure("info")
        structlog.get_logger("memoryd").error("startup_refused", error=f"memoryd: bad setting: {error}")
        return 2
    logs.configure(config.log_level)
    if args.command == "health":
        return health(config)
    if args.command in ("forget-user", "export", "import", "reindex"):
        return lifecycle.run(args, config)
    log = structlog.get_logger("memoryd")
    try:
        from memoryd.app import security

        security(config, warn=False)  # bad tokens/TLS or an unauthenticated public address: refuse before serving
    except ValueError as error:
        log.error("startup_refused", error=f"memoryd: {error}")
        return 2
    if config.tracing:
        from memoryd.observability import tracing

        try:
            tracing.require()
        except tracing.TracingUnavailable as error:
            log.error("startup_refused", error=f"memoryd: {error}")
            return 2
    if config.workers != 1:
        return serve_workers(config, log)
    return run_server(config)


def serve_workers(config: config_module.Config, log) -> int:
    """`--workers N`: fork N processes sharing the port, and on the embedded default the one
    vector engine process they share; see memoryd.workers and storage/qdrant/edge_shared.py."""
    import dataclasses
    from pathlib import Path

    try:
        workers.check_workers_supported(
            config.workers,
            vectors_enabled=config.vectors_enabled,
            qdrant_url=config.qdrant_url,
            engine_process=config.vector_engine_process,
        )
    except workers.WorkersUnsupported as error:
        log.error("startup_failed", error=f"memoryd: {error}")
        return 2

    try:
        with contextlib.ExitStack() as reserved:
            # Fix the HTTP address before forking, as run_workers does for gRPC: `auto` must
            # follow the --listen given here (not each worker's resolved port + 1), and a
            # port 0 must be one port that every worker shares.
            http = config.http_address
            if http and addresses.split(http)[1] == 0:
                http = addresses.join(addresses.bind_host(http), reserved.enter_context(workers.reserve_port(http)))

            def worker_main(index: int, address: str, started) -> None:
                worker_config = dataclasses.replace(config, listen=address, http_listen=http or "off", port_file="")
                code = run_server(worker_config, worker_index=index, started=started)
                if code:
                    sys.exit(code)

            from memoryd.vectors.setup import shared_engine

            return workers.run_workers(
                config.workers,
                config.listen,
                worker_main,
                port_file=Path(config.port_file) if config.port_file else None,
                companion=shared_engine(config),
            )
    except OSError as error:
        log.error("startup_failed", error=str(error))
        return 1


if __name__ == "__main__":
    sys.exit(main())
