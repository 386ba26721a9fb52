package memoryd

import (
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ReasonEventsCompacted is the ErrorInfo reason of a Watch resumed from a seq
// older than the server's retention (Metadata["oldest_seq"] says where the log starts).
const ReasonEventsCompacted = "EVENTS_COMPACTED"

// ReasonTokenExpired is the ErrorInfo reason of a call or Watch stream whose
// JWT expired; a client with a TokenProvider gets a fresh one.
const ReasonTokenExpired = "TOKEN_EXPIRED"

// Error is a failed call's status with the google.rpc details memoryd
// attaches (AIP-193): branch on Reason (ErrorInfo) or read FieldViolations
// (BadRequest) instead of parsing message text.
type Error struct {
	Code            codes.Code
	Message         string
	Reason          string            // ErrorInfo.reason; "" when absent
	Metadata        map[string]string // ErrorInfo.metadata
	FieldViolations []*errdetails.BadRequest_FieldViolation
	RetryDelay      time.Duration // RetryInfo.retry_delay; 0 when absent
	Details         []any         // every decoded detail message
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return e.Code.String() + ": " + e.Message + " (" + e.Reason + ")"
	}
	return e.Code.String() + ": " + e.Message
}

// ErrorOf decodes a gRPC error (also when wrapped); nil for a nil error.
func ErrorOf(err error) *Error {
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	e := &Error{Code: st.Code(), Message: st.Message(), Details: st.Details()}
	for _, detail := range e.Details {
		switch d := detail.(type) {
		case *errdetails.ErrorInfo:
			e.Reason, e.Metadata = d.GetReason(), d.GetMetadata()
		case *errdetails.BadRequest:
			e.FieldViolations = append(e.FieldViolations, d.GetFieldViolations()...)
		case *errdetails.RetryInfo:
			e.RetryDelay = d.GetRetryDelay().AsDuration()
		}
	}
	return e
}
