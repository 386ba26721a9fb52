"""TLS and mutual TLS for the gRPC port.

`--tls-cert` + `--tls-key` serve TLS. Adding `--tls-client-ca` requires every client to
present a certificate signed by that CA (mTLS); the handshake fails otherwise, before any
RPC runs. Tenants still come from bearer tokens (transport/auth.py).
"""

from __future__ import annotations

from pathlib import Path

import grpc


class TlsConfigError(ValueError):
    pass


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise TlsConfigError(f"cannot read {what} {path}: {exc.strerror}") from None


def server_credentials(cert: str, key: str, client_ca: str = "") -> grpc.ServerCredentials | None:
    """Credentials for add_secure_port, or None when TLS is not configured."""
    if not cert and not key:
        if client_ca:
            raise TlsConfigError("--tls-client-ca needs --tls-cert and --tls-key")
        return None
    if not (cert and key):
        raise TlsConfigError("TLS needs both --tls-cert and --tls-key")
    pair = [(_read(key, "TLS key"), _read(cert, "TLS certificate"))]
    if client_ca:
        return grpc.ssl_server_credentials(
            pair, root_certificates=_read(client_ca, "client CA"), require_client_auth=True
        )
    return grpc.ssl_server_credentials(pair)
