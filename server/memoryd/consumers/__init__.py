"""The log-consumer runtime: everything that follows a tenant's event log and derives state
from it (the recall index, memory formation) runs as a `LogConsumer` of one `Runtime`
(runtime.py). docs/ARCHITECTURE.md, "Log consumers"."""

from memoryd.consumers.runtime import LogConsumer, Positions, Runtime, TenantStatus, Track

__all__ = ["LogConsumer", "Positions", "Runtime", "TenantStatus", "Track"]
