"""Domain errors. The transport layer maps each class to one gRPC status (transport/status.py)."""

from __future__ import annotations

from dataclasses import dataclass


class MemorydError(Exception):
    """Base class of every error the domain raises on purpose."""

    reason: str = "INTERNAL"

    def __init__(self, message: str, *, reason: str | None = None, metadata: dict[str, str] | None = None):
        super().__init__(message)
        if reason:
            self.reason = reason
        self.metadata = metadata or {}


@dataclass(frozen=True, slots=True)
class FieldViolation:
    field: str
    description: str


class InvalidArgument(MemorydError):
    """The request is malformed; `violations` name the offending fields."""

    reason = "INVALID_ARGUMENT"

    def __init__(self, violations: list[FieldViolation] | FieldViolation):
        if isinstance(violations, FieldViolation):
            violations = [violations]
        self.violations = violations
        super().__init__("; ".join(f"{v.field}: {v.description}" for v in violations))


class NotFound(MemorydError):
    reason = "NOT_FOUND"


class FailedPrecondition(MemorydError):
    reason = "FAILED_PRECONDITION"


class OutOfRange(MemorydError):
    reason = "OUT_OF_RANGE"


class ResourceExhausted(MemorydError):
    reason = "RESOURCE_EXHAUSTED"


class StorageUnavailable(MemorydError):
    """A backing store could not be reached; the call may be retried."""

    reason = "STORAGE_UNAVAILABLE"


class Unauthenticated(MemorydError):
    reason = "UNAUTHENTICATED"
