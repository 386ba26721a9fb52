"""Server reflection that resolves method names, so ghz and grpcurl work without .proto files.

protobuf's upb descriptor pool cannot find a file by a method's full name
(`memoryd.v1.MemoryService.GetHistory` raises KeyError), while ghz asks for exactly
that symbol. This pool answers such a lookup with the file of the method's service.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pool
from grpc_reflection.v1alpha import reflection


class MethodResolvingPool:
    """A descriptor pool that also resolves `package.Service.Method` symbols."""

    def __init__(self, pool: descriptor_pool.DescriptorPool | None = None) -> None:
        self._pool = pool or descriptor_pool.Default()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)

    def FindFileContainingSymbol(self, symbol: str) -> Any:  # noqa: N802 - protobuf's name
        try:
            return self._pool.FindFileContainingSymbol(symbol)
        except KeyError:
            service_name, _, method_name = symbol.rpartition(".")
            try:
                service = self._pool.FindServiceByName(service_name)
            except KeyError:
                service = None
            if service is None or method_name not in service.methods_by_name:
                raise
            return service.file


def enable_reflection(service_names: list[str], server: Any) -> None:
    reflection.enable_server_reflection(service_names, server, pool=MethodResolvingPool())
