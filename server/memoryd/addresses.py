"""host:port listen addresses, parsed in one place (gRPC, HTTP, workers, health, the bind rule)."""

from __future__ import annotations

import errno


def split(address: str) -> tuple[str, int]:
    """(host, port) of `host:port`; the host without an IPv6 literal's brackets, "" for `:port`.

    ValueError when `address` is not host:port with a port from 0 to 65535.
    """
    host, sep, port = address.strip().rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"not a host:port address: {address!r}")
    return host.strip("[]"), int(port)


def join(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def bind_host(address: str) -> str:
    """The host to bind for `address`: every interface when it names none."""
    return split(address)[0] or "0.0.0.0"


def bind_error(listener: str, address: str, error: OSError) -> OSError:
    """`error` from binding `address` as an OSError that names the listener (its flag), the
    address and the port: what a startup failure says instead of a bare `[Errno 98]`."""
    try:
        port: int | str = split(address)[1]
    except ValueError:
        port = "?"
    if error.errno == errno.EADDRINUSE:
        why = f"port {port} is already in use (another process listens on it; address already in use)"
    else:
        why = f"{error.strerror or error} (port {port})"
    failure = OSError(f"{listener} cannot listen on {address}: {why}")  # str(): the sentence alone
    failure.errno = error.errno
    return failure
