"""Several server processes on one port (SO_REUSEPORT), as in grpc's examples/python/multiprocessing.

The parent process creates no gRPC object: it reserves the port with a plain socket
that has SO_REUSEPORT set (so `--listen host:0` works and the port cannot be taken
by someone else meanwhile), forks the workers, waits until every worker serves, then
writes the port file and supervises. Each worker builds its own event loop, store
and grpc.aio server bound to the same address with `grpc.so_reuseport` on; the kernel
spreads incoming connections over them. Nothing is shared between workers in memory:
events travel through the database, as between replicas.

If one worker dies, the others are stopped and the parent exits non-zero, so the
supervisor (systemd, Kubernetes) restarts the whole set rather than running short.

SIGTERM and SIGINT are blocked while the parent forks, so a worker never dies of one
before it can handle it: the worker keeps them blocked (held pending) until its event loop
has its handlers (`accept_stop_signals`), and a stop asked for during start-up is then a
clean stop once the start has finished.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from memoryd import addresses

logger = logging.getLogger(__name__)

# worker_main(index, bind_address, started): serve until SIGTERM/SIGINT; call started() once listening.
WorkerMain = Callable[[int, str, Callable[[], None]], None]

STARTUP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


class WorkersUnsupported(ValueError):
    """The configuration cannot run with several worker processes."""


def check_workers_supported(workers: int, *, vectors_enabled: bool, qdrant_url: str | None) -> None:
    """Qdrant Edge (the embedded vector store) is one process per folder: several workers need a Qdrant server."""
    if workers < 1:
        raise WorkersUnsupported(f"--workers must be at least 1, got {workers}")
    if workers > 1 and vectors_enabled and not qdrant_url:
        raise WorkersUnsupported(
            f"--workers {workers} needs a Qdrant server: Qdrant Edge (the embedded vector store) "
            "runs in one process only. Set the Qdrant URL (MEMORYD_QDRANT_URL / --qdrant-url), "
            "turn vectors off (--vectors-enabled false), or run with --workers 1."
        )


@contextlib.contextmanager
def reserve_port(listen: str) -> Iterator[int]:
    """Bind (never listen on) the address with SO_REUSEPORT for as long as the workers run."""
    host, port = addresses.bind_host(listen), addresses.split(listen)[1]
    family, kind, proto, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
        yield sock.getsockname()[1]
    finally:
        sock.close()


def signal_on_parent_death(signum: int = signal.SIGTERM) -> None:
    """Linux: have the kernel send `signum` to this process when its parent dies (a worker;
    the vector engine process). Elsewhere a no-op."""
    with contextlib.suppress(Exception):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signum)


def accept_stop_signals() -> None:
    """Deliver SIGTERM/SIGINT again (a worker starts with them blocked); call once their
    handlers are installed. A no-op in a process that never blocked them."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _worker(index: int, address: str, worker_main: WorkerMain, ready: multiprocessing.connection.Connection) -> None:
    for sig in STOP_SIGNALS:  # not the parent's handler; still blocked until accept_stop_signals()
        signal.signal(sig, signal.SIG_DFL)
    signal_on_parent_death()

    def started() -> None:
        ready.send(index)
        ready.close()

    worker_main(index, address, started)


def run_workers(count: int, listen: str, worker_main: WorkerMain, *, port_file: Path | None = None) -> int:
    """Fork `count` workers serving `listen`; returns the exit code for the parent process."""
    ctx = multiprocessing.get_context("fork")
    stopping = False

    def request_stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    with reserve_port(listen) as port:
        address = addresses.join(addresses.bind_host(listen), port)
        processes: list[multiprocessing.process.BaseProcess] = []
        readers: list[multiprocessing.connection.Connection] = []
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # the workers inherit the mask
        previous = {sig: signal.signal(sig, request_stop) for sig in STOP_SIGNALS}
        # SIGHUP (re-read the tokens) goes to every worker once they serve; until then it is
        # ignored rather than ending the parent, its default.
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, signal.SIG_IGN)
        try:
            try:
                for index in range(count):
                    reader, writer = ctx.Pipe(duplex=False)
                    process = ctx.Process(
                        target=_worker, args=(index, address, worker_main, writer), name=f"memoryd-worker-{index}"
                    )
                    process.start()
                    writer.close()
                    processes.append(process)
                    readers.append(reader)
            finally:
                accept_stop_signals()  # a signal that came meanwhile is handled now
            outcome = _await_started(processes, readers, lambda: stopping)
            if outcome != "started":
                # Asked to stop while starting: a clean stop. A worker that failed: exit 1.
                return _stop_all(processes, exit_code=0 if outcome == "stopping" else 1)
            signal.signal(signal.SIGHUP, lambda signum, _frame: _forward(processes, signum))
            if port_file is not None:
                tmp = port_file.with_name(port_file.name + ".tmp")
                tmp.write_text(f"{port}\n")
                os.replace(tmp, port_file)
            logger.info("workers serving", extra={"workers": count, "address": address})
            return _supervise(processes, lambda: stopping)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _forward(processes, signum: int) -> None:
    for process in processes:
        if process.exitcode is None:
            os.kill(process.pid, signum)


def _await_started(processes, readers, stopping: Callable[[], bool]) -> str:
    """"started" once every worker serves; "stopping" when a stop was asked for first;
    "failed" when a worker exited or the start took too long."""
    pending = dict(zip(readers, processes, strict=True))
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while pending:
        if stopping():
            logger.info("stopping during startup", extra={"pending": len(pending)})
            return "stopping"
        if time.monotonic() > deadline:
            logger.error("workers did not start", extra={"pending": len(pending)})
            return "failed"
        sentinels = {process.sentinel: process for process in pending.values()}
        ready = multiprocessing.connection.wait([*pending, *sentinels], timeout=0.5)
        for item in ready:
            if item in sentinels:
                process = sentinels[item]
                logger.error("worker exited during startup", extra={"worker": process.name, "code": process.exitcode})
                return "failed"
            try:
                item.recv()
            except EOFError:
                continue  # the worker died; its sentinel reports it on the next round
            item.close()
            del pending[item]
    return "started"


def _supervise(processes, stopping: Callable[[], bool]) -> int:
    while not stopping():
        exited = multiprocessing.connection.wait([p.sentinel for p in processes], timeout=0.5)
        if exited:
            dead = [p for p in processes if p.exitcode is not None]
            for process in dead:
                logger.error("worker exited", extra={"worker": process.name, "code": process.exitcode})
            return _stop_all(processes, exit_code=1)
    return _stop_all(processes, exit_code=0)


def _stop_all(processes, *, exit_code: int) -> int:
    for process in processes:
        if process.exitcode is None:
            os.kill(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.exitcode is None:
            process.kill()
            process.join()
    codes = [process.exitcode or 0 for process in processes]
    return exit_code or (1 if any(codes) else 0)
