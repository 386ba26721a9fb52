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


# A rejected request lists at most this many violations (with the total count), so that
# the error stays far below the 8 KiB of trailers default gRPC clients accept.
MAX_LISTED_VIOLATIONS = 20
# The status message repeats only the first few of them.
MAX_VIOLATIONS_IN_MESSAGE = 3


class InvalidArgument(MemorydError):
    """The request is malformed; `violations` name the offending fields.

    `violations` holds at most MAX_LISTED_VIOLATIONS of them; `count` is how many there were.
    """

    reason = "INVALID_ARGUMENT"

    def __init__(self, violations: list[FieldViolation] | FieldViolation, *, count: int | None = None):
        if isinstance(violations, FieldViolation):
            violations = [violations]
        self.count = max(count or 0, len(violations))
        self.violations = violations[:MAX_LISTED_VIOLATIONS]
        shown = self.violations[:MAX_VIOLATIONS_IN_MESSAGE]
        message = "; ".join(f"{v.field}: {v.description}" for v in shown)
        if self.count > len(shown):
            message += f" (and {self.count - len(shown)} more)"
        super().__init__(message, metadata={"violation_count": str(self.count)})


class MalformedRequest(MemorydError):
    """The request could not be decoded at all, so no field can be named (INVALID_ARGUMENT)."""

    reason = "MALFORMED_REQUEST"


class NotFound(MemorydError):
    reason = "NOT_FOUND"


class FailedPrecondition(MemorydError):
    reason = "FAILED_PRECONDITION"


class OutOfRange(MemorydError):
    reason = "OUT_OF_RANGE"


class Aborted(MemorydError):
    """A concurrency conflict: the call lost a race with another and may be retried whole
    (ABORTED, which retry policies retry; AIP-193). The subclass gives the reason."""

    reason = "ABORTED"


class ResourceExhausted(MemorydError):
    reason = "RESOURCE_EXHAUSTED"


class StorageFull(ResourceExhausted):
    """A write could not be stored: the disk under a store is full (or the embedded vector
    store is below its free-space reserve). Nothing of the write was stored; reads go on.
    `store` ("messages" or "vectors") travels as ErrorInfo.metadata["store"]."""

    reason = "STORAGE_FULL"

    def __init__(self, message: str, store: str = "messages") -> None:
        super().__init__(message, metadata={"store": store})

    def __reduce__(self):  # pickled across the vector engine process's socket
        return type(self), (str(self), self.metadata["store"])


class StorageUnavailable(MemorydError):
    """A backing store could not be reached; the call may be retried."""

    reason = "STORAGE_UNAVAILABLE"


class DeadlineExceeded(MemorydError):
    """A wait the caller asked for did not end in time (WaitForFormation)."""

    reason = "DEADLINE_EXCEEDED"


class Unauthenticated(MemorydError):
    reason = "UNAUTHENTICATED"


class PermissionDenied(MemorydError):
    """The caller is who it says, but its token does not allow this call (a scope it lacks,
    or data beyond the end user it is bound to)."""

    reason = "PERMISSION_DENIED"
