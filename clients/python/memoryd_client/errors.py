"""Exceptions raised by MemoryClient.

Every failed call becomes one RpcError subclass chosen by its gRPC status
code. The server's rich status (AIP-193: `google.rpc.Status` in the
`grpc-status-details-bin` trailer) is decoded, so callers branch on
`error.reason` (ErrorInfo) or read `error.field_violations` (BadRequest)
instead of parsing message text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import grpc
from google.protobuf import message as _message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

# Detail types a memoryd server may attach, by their Any type URL suffix.
_DETAIL_TYPES: dict[str, type[_message.Message]] = {
    cls.DESCRIPTOR.full_name: cls
    for cls in (
        error_details_pb2.ErrorInfo,
        error_details_pb2.BadRequest,
        error_details_pb2.RetryInfo,
        error_details_pb2.DebugInfo,
        error_details_pb2.QuotaFailure,
        error_details_pb2.PreconditionFailure,
        error_details_pb2.ResourceInfo,
        error_details_pb2.RequestInfo,
        error_details_pb2.Help,
        error_details_pb2.LocalizedMessage,
    )
}


class RpcError(Exception):
    """A memoryd call that ended with a non-OK status.

    Attributes:
        code: the gRPC status code.
        message: the status message from the server.
        status: the decoded `google.rpc.Status`, or None when the server sent none.
        details: the unpacked detail messages of `status` (ErrorInfo, BadRequest, ...).
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        status: status_pb2.Status | None = None,
        details: Sequence[_message.Message] = (),
    ) -> None:
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.details = list(details)

    def detail(self, kind: type[_message.Message]) -> _message.Message | None:
        """The first detail of the given type, if any."""
        return next((d for d in self.details if isinstance(d, kind)), None)

    @property
    def error_info(self) -> error_details_pb2.ErrorInfo | None:
        return self.detail(error_details_pb2.ErrorInfo)

    @property
    def reason(self) -> str:
        """ErrorInfo.reason, the stable machine-readable cause ("" when absent)."""
        info = self.error_info
        return info.reason if info else ""

    @property
    def metadata(self) -> Mapping[str, str]:
        """ErrorInfo.metadata ({} when absent)."""
        info = self.error_info
        return dict(info.metadata) if info else {}

    @property
    def field_violations(self) -> list[error_details_pb2.BadRequest.FieldViolation]:
        """BadRequest field violations ([] when absent)."""
        bad = self.detail(error_details_pb2.BadRequest)
        return list(bad.field_violations) if bad else []  # type: ignore[attr-defined]

    @property
    def retry_delay(self) -> float | None:
        """RetryInfo.retry_delay in seconds, when the server suggested one."""
        info = self.detail(error_details_pb2.RetryInfo)
        return info.retry_delay.ToTimedelta().total_seconds() if info else None  # type: ignore[attr-defined]


class CancelledError(RpcError):
    """CANCELLED: the call was cancelled (usually by the caller)."""


class UnknownError(RpcError):
    """UNKNOWN."""


class InvalidArgumentError(RpcError):
    """INVALID_ARGUMENT: see `field_violations`; nothing was stored."""


class DeadlineExceededError(RpcError):
    """DEADLINE_EXCEEDED: the call's deadline passed."""


class NotFoundError(RpcError):
    """NOT_FOUND."""


class AlreadyExistsError(RpcError):
    """ALREADY_EXISTS."""


class PermissionDeniedError(RpcError):
    """PERMISSION_DENIED."""


class ResourceExhaustedError(RpcError):
    """RESOURCE_EXHAUSTED: a limit was reached (e.g. the server's Watch stream limit)."""


class FailedPreconditionError(RpcError):
    """FAILED_PRECONDITION."""


class AbortedError(RpcError):
    """ABORTED."""


class OutOfRangeError(RpcError):
    """OUT_OF_RANGE."""


class EventsCompactedError(OutOfRangeError):
    """Watch resumed from a seq older than the server's retention.

    Events were lost for this watcher: resync from the source of truth, then
    watch again from `oldest_seq` (or from now).
    """

    @property
    def oldest_seq(self) -> int | None:
        value = self.metadata.get("oldest_seq")
        return int(value) if value else None


class UnimplementedError(RpcError):
    """UNIMPLEMENTED."""


class InternalError(RpcError):
    """INTERNAL."""


class UnavailableError(RpcError):
    """UNAVAILABLE: the server or its storage is down; retried automatically first."""


class DataLossError(RpcError):
    """DATA_LOSS."""


class UnauthenticatedError(RpcError):
    """UNAUTHENTICATED: missing or invalid bearer token."""


_BY_CODE: dict[grpc.StatusCode, type[RpcError]] = {
    grpc.StatusCode.CANCELLED: CancelledError,
    grpc.StatusCode.UNKNOWN: UnknownError,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.ABORTED: AbortedError,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRangeError,
    grpc.StatusCode.UNIMPLEMENTED: UnimplementedError,
    grpc.StatusCode.INTERNAL: InternalError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DATA_LOSS: DataLossError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
}

EVENTS_COMPACTED = "EVENTS_COMPACTED"


def _unpack(status: status_pb2.Status) -> list[_message.Message]:
    details = []
    for any_detail in status.details:
        cls = _DETAIL_TYPES.get(any_detail.TypeName())
        if cls is not None:
            detail = cls()
            any_detail.Unpack(detail)
            details.append(detail)
    return details


def from_rpc_error(error: grpc.RpcError) -> RpcError:
    """Converts a grpc error (sync or aio) into the matching RpcError subclass."""
    code = error.code()
    message = error.details() or ""
    try:
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
    except ValueError:
        status = None  # the trailer disagrees with the status line; trust the status line
    details = _unpack(status) if status is not None else []
    cls = _BY_CODE.get(code, RpcError)
    result = cls(code, message, status, details)
    if cls is OutOfRangeError and result.reason == EVENTS_COMPACTED:
        result = EventsCompactedError(code, message, status, details)
    return result
