"""Several server processes on one port (SO_REUSEPORT), as in grpc's examples/python/multiprocessing.

The parent process creates no gRPC object: it reserves the port with a plain socket
that has SO_REUSEPORT set (so `--listen host:0` works and the port cannot be taken
by someone else meanwhile), forks the workers, waits until every worker serves, then
writes the port file and supervises. Each worker builds its own event loop, store
and grpc.aio server bound to the same address with `grpc.so_reuseport` on; the kernel
spreads incoming connections over them. Nothing is shared between workers in memory:
events travel through the database, as between replicas.

A worker that dies (a crash, `kill -9`) is replaced by a new one on the same port; what it
had acknowledged is in the database already (a commit precedes every answer). Replacements
back off: the first at once, then 1, 2, 4 ... up to RESTART_BACKOFF_MAX_S seconds while
deaths keep coming within RESTART_WINDOW_S of each other; more than RESTART_LIMIT deaths in
that window stop the set and the parent exits non-zero, so the service manager (systemd,
Kubernetes) sees a crash loop instead of a set that keeps running short.

A companion (the embedded vector engine: storage/qdrant/edge_shared.py) is one process the
workers share: started before them, supervised and replaced under the same rule, stopped
after them; the workers close the descriptors that keep it alive (only the parent may).

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
from typing import Protocol

from memoryd import addresses
from memoryd.shutdown import signal_on_parent_death

logger = logging.getLogger(__name__)

# worker_main(index, bind_address, started): serve until SIGTERM/SIGINT; call started() once listening.
WorkerMain = Callable[[int, str, Callable[[], None]], None]

STARTUP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
# Replacing a process that died (see the module doc).
RESTART_LIMIT = 5
RESTART_WINDOW_S = 60.0
RESTART_BACKOFF_MAX_S = 16.0


class Companion(Protocol):
    """A process the workers share, started before them and stopped after them."""

    name: str

    def start(self) -> None:
        """Start it and return once it serves; OSError when it cannot."""

    def sentinel(self) -> int:
        """A descriptor that becomes readable when it exits."""

    def inherited(self) -> list[int]:
        """Descriptors a forked worker must close."""

    def stop(self) -> int | None:
        """Stop it (the workers have stopped); its exit code."""


class WorkersUnsupported(ValueError):
    """The configuration cannot run with several worker processes."""


def check_workers_supported(
    workers: int, *, vectors_enabled: bool, qdrant_url: str | None, engine_process: bool = True
) -> None:
    """Qdrant Edge (the embedded vector store) is one process per folder: the workers share its
    engine process (edge_shared.py), which an engine inside the server process cannot be."""
    if workers < 1:
        raise WorkersUnsupported(f"--workers must be at least 1, got {workers}")
    if workers > 1 and vectors_enabled and not qdrant_url and not engine_process:
        raise WorkersUnsupported(
            f"--workers {workers} needs Qdrant Edge in its own process (--vector-engine-process true, "
            "the default) or a Qdrant server (MEMORYD_QDRANT_URL / --qdrant-url): an engine inside "
            "one worker cannot serve the others."
        )


@contextlib.contextmanager
def reserve_port(listen: str, listener: str = "gRPC (--listen)") -> Iterator[int]:
    """Bind (never listen on) the address with SO_REUSEPORT for as long as the workers run;
    an OSError naming `listener` and the port when it cannot."""
    host, port = addresses.bind_host(listen), addresses.split(listen)[1]
    family, kind, proto, _name, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind(address)
        except OSError as error:
            raise addresses.bind_error(listener, listen, error) from None
        yield sock.getsockname()[1]
    finally:
        sock.close()


def accept_stop_signals() -> None:
    """Deliver SIGTERM/SIGINT again (a worker starts with them blocked); call once their
    handlers are installed. A no-op in a process that never blocked them."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _worker(
    index: int,
    address: str,
    worker_main: WorkerMain,
    ready: multiprocessing.connection.Connection,
    inherited: list[int],
) -> None:
    for sig in STOP_SIGNALS:  # not the parent's handler; still blocked until accept_stop_signals()
        signal.signal(sig, signal.SIG_DFL)
    signal_on_parent_death()
    for fd in inherited:
        with contextlib.suppress(OSError):
            os.close(fd)

    def started() -> None:
        ready.send(index)
        ready.close()

    worker_main(index, address, started)


class _Restarts:
    """When to replace a process that died, and when to give up (module doc)."""

    def __init__(self) -> None:
        self.deaths: list[float] = []

    def next_delay(self) -> float | None:
        """Seconds to wait before the replacement; None: too many deaths, give up."""
        now = time.monotonic()
        self.deaths = [t for t in self.deaths if now - t < RESTART_WINDOW_S] + [now]
        if len(self.deaths) > RESTART_LIMIT:
            return None
        return 0.0 if len(self.deaths) == 1 else min(RESTART_BACKOFF_MAX_S, 2.0 ** (len(self.deaths) - 2))


class _Set:
    """The workers (by index) and the companion, as the parent forks and replaces them."""

    def __init__(self, address: str, worker_main: WorkerMain, companion: Companion | None) -> None:
        self.ctx = multiprocessing.get_context("fork")
        self.address, self.worker_main, self.companion = address, worker_main, companion
        self.processes: list[multiprocessing.process.BaseProcess] = []
        self.readers: dict[multiprocessing.connection.Connection, int] = {}  # start reports not yet read

    def fork(self, index: int) -> None:
        """Start worker `index` (a new one, or the replacement of a dead one), stop signals blocked
        around the fork so that it inherits them blocked."""
        reader, writer = self.ctx.Pipe(duplex=False)
        inherited = self.companion.inherited() if self.companion is not None else []
        process = self.ctx.Process(
            target=_worker,
            args=(index, self.address, self.worker_main, writer, inherited),
            name=f"memoryd-worker-{index}",
        )
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        writer.close()
        if index < len(self.processes):
            self.processes[index] = process
        else:
            self.processes.append(process)
        self.readers[reader] = index

    def read_report(self, reader: multiprocessing.connection.Connection) -> int | None:
        """The index of the worker that reported it serves (None: it died first)."""
        index: int | None = self.readers.pop(reader)
        try:
            reader.recv()
        except EOFError:
            index = None
        reader.close()
        return index


def run_workers(
    count: int,
    listen: str,
    worker_main: WorkerMain,
    *,
    port_file: Path | None = None,
    companion: Companion | None = None,
) -> int:
    """Fork `count` workers serving `listen` (after starting `companion`); returns the exit
    code for the parent process."""
    stopping = False

    def request_stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    with reserve_port(listen) as port:
        address = addresses.join(addresses.bind_host(listen), port)
        workers = _Set(address, worker_main, companion)
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # the workers inherit the mask
        previous = {sig: signal.signal(sig, request_stop) for sig in STOP_SIGNALS}
        # SIGHUP (re-read the tokens) goes to every worker once they serve; until then it is
        # ignored rather than ending the parent, its default.
        previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, signal.SIG_IGN)
        try:
            try:
                if companion is not None:
                    companion.start()
                for index in range(count):
                    workers.fork(index)
            finally:
                accept_stop_signals()  # a signal that came meanwhile is handled now
            outcome = _await_started(workers, lambda: stopping)
            if outcome != "started":
                # Asked to stop while starting: a clean stop. A worker that failed: exit 1.
                return _stop_all(workers, exit_code=0 if outcome == "stopping" else 1)
            signal.signal(signal.SIGHUP, lambda signum, _frame: _forward(workers.processes, signum))
            if port_file is not None:
                tmp = port_file.with_name(port_file.name + ".tmp")
                tmp.write_text(f"{port}\n")
                os.replace(tmp, port_file)
            logger.info("workers serving", extra={"workers": count, "address": address})
            return _supervise(workers, lambda: stopping)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _forward(processes, signum: int) -> None:
    for process in processes:
        if process.exitcode is None:
            os.kill(process.pid, signum)


def _await_started(workers: _Set, stopping: Callable[[], bool]) -> str:
    """ "started" once every worker serves; "stopping" when a stop was asked for first;
    "failed" when a worker exited or the start took too long."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while workers.readers:
        if stopping():
            logger.info("stopping during startup", extra={"pending": len(workers.readers)})
            return "stopping"
        if time.monotonic() > deadline:
            logger.error("workers did not start", extra={"pending": len(workers.readers)})
            return "failed"
        sentinels = {process.sentinel: process for process in workers.processes}
        ready = multiprocessing.connection.wait([*workers.readers, *sentinels], timeout=0.5)
        for item in ready:
            if item in sentinels:
                process = sentinels[item]
                logger.error("worker exited during startup", extra={"worker": process.name, "code": process.exitcode})
                return "failed"
        for item in ready:
            if item in workers.readers:
                workers.read_report(item)  # a worker that died: its sentinel reports it next round
    return "started"


def _supervise(workers: _Set, stopping: Callable[[], bool]) -> int:
    """Replace what dies until asked to stop (or until too many deaths: exit 1)."""
    restarts = {"worker": _Restarts(), "companion": _Restarts()}
    due: dict[int | str, float] = {}  # worker index, or "companion": when to replace it
    companion = workers.companion
    while not stopping():
        watched: dict[int, int | str] = {p.sentinel: i for i, p in enumerate(workers.processes) if i not in due}
        if companion is not None and "companion" not in due:
            watched[companion.sentinel()] = "companion"
        now = time.monotonic()
        timeout = min([0.5, *(max(0.0, t - now) for t in due.values())])
        ready = multiprocessing.connection.wait([*watched, *workers.readers], timeout=timeout)
        for item in ready:
            if isinstance(item, multiprocessing.connection.Connection):  # a worker reporting it serves
                index = workers.read_report(item)
                if index is not None:
                    logger.info("worker replaced", extra={"worker": workers.processes[index].name})
                continue
            assert isinstance(item, int)  # a sentinel: a member ended
            which = watched[item]
            if isinstance(which, str):  # "companion"
                assert companion is not None
                try:
                    output = os.read(item, 4096)
                except OSError:
                    output = b""
                if output:
                    continue  # something it printed, not its end
                code = companion.stop()  # (it has exited: this reaps it)
                name = companion.name
            else:
                workers.processes[which].join()
                code = workers.processes[which].exitcode
                name = workers.processes[which].name
            delay = restarts["companion" if which == "companion" else "worker"].next_delay()
            if delay is None:
                logger.error("exited too often: stopping", extra={"member": name, "code": code, "limit": RESTART_LIMIT})
                return _stop_all(workers, exit_code=1)
            logger.error("exited: replacing it", extra={"member": name, "code": code, "delay_s": delay})
            due[which] = time.monotonic() + delay
        for which, when in list(due.items()):
            if time.monotonic() < when or stopping():
                continue
            del due[which]
            try:
                if isinstance(which, int):
                    workers.fork(which)
                elif companion is not None:
                    companion.start()
            except OSError as error:
                logger.error("replacement failed: stopping", extra={"member": str(which), "error": str(error)})
                return _stop_all(workers, exit_code=1)
    return _stop_all(workers, exit_code=0)


def _stop_all(workers: _Set, *, exit_code: int) -> int:
    """Stop the workers, then the companion (they may still be using it while they stop)."""
    processes = workers.processes
    for process in processes:
        if process.exitcode is None and process.pid is not None:
            os.kill(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.exitcode is None:
            process.kill()
            process.join()
    for reader in list(workers.readers):
        workers.read_report(reader)
    codes = [process.exitcode or 0 for process in processes]
    if workers.companion is not None:
        codes.append(workers.companion.stop() or 0)
    return exit_code or (1 if any(codes) else 0)
