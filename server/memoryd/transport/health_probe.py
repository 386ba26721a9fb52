"""`memoryd health`: asks a running memoryd, through gRPC health checking, whether it serves.

It reads the same settings as `memoryd serve` (so a container's HEALTHCHECK follows its
MEMORYD_LISTEN and TLS settings): the listen port on loopback (a wildcard or an own address
is reached through loopback; port 0 is read from --port-file), plaintext unless
--tls-cert is set; with TLS it trusts --health-tls-ca, else --tls-client-ca, else
--tls-cert itself (a self-signed certificate or a chain that includes its root), and
expects the certificate to name the loopback address unless --health-tls-name says what
it names. Under mTLS it presents --tls-cert/--tls-key as its client certificate.
"""

from __future__ import annotations

from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd import addresses
from memoryd.config import Config


def target(config: Config) -> str:
    host, port = addresses.split(config.listen)
    if port == 0 and config.port_file:
        port = int(Path(config.port_file).read_text().strip())
    return addresses.join("::1" if ":" in host else "127.0.0.1", port)


def _channel(config: Config) -> grpc.Channel:
    if not config.tls_cert:
        return grpc.insecure_channel(target(config))
    trusted = config.health_tls_ca or config.tls_client_ca or config.tls_cert
    identity = {}
    if config.tls_client_ca:
        identity = {
            "private_key": Path(config.tls_key).read_bytes(),
            "certificate_chain": Path(config.tls_cert).read_bytes(),
        }
    credentials = grpc.ssl_channel_credentials(root_certificates=Path(trusted).read_bytes(), **identity)
    options = [("grpc.ssl_target_name_override", config.health_tls_name)] if config.health_tls_name else []
    return grpc.secure_channel(target(config), credentials, options=options)


def check(config: Config, timeout: float = 2.0) -> str:
    """The server's health status name (SERVING, NOT_SERVING ...), or UNREACHABLE."""
    try:
        with _channel(config) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            response = stub.Check(health_pb2.HealthCheckRequest(), timeout=timeout)  # type: ignore[attr-defined]  # the stubs declare no calls
    except (grpc.RpcError, OSError):
        return "UNREACHABLE"
    return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
