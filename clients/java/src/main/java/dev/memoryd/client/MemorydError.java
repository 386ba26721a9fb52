package dev.memoryd.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A failed call's status with the google.rpc details memoryd attaches (AIP-193): branch on
 * {@link #reason()} (ErrorInfo) or read {@link #fieldViolations()} (BadRequest) instead of
 * parsing message text.
 *
 * <pre>{@code
 * } catch (StatusRuntimeException e) {
 *   MemorydError error = MemorydError.from(e);
 *   if (error.code() == Status.Code.INVALID_ARGUMENT) { ... error.fieldViolations() ... }
 * }
 * }</pre>
 */
public final class MemorydError {
  /** ErrorInfo reason of a call or Watch stream whose JWT expired (a token provider gives a fresh one). */
  public static final String TOKEN_EXPIRED = "TOKEN_EXPIRED";

  private final Status.Code code;
  private final String message;
  private final List<Message> details;

  private MemorydError(Status.Code code, String message, List<Message> details) {
    this.code = code;
    this.message = message;
    this.details = details;
  }

  /** Decodes a gRPC failure (StatusRuntimeException or StatusException, or one they cause). */
  public static MemorydError from(Throwable failure) {
    Status status = Status.fromThrowable(failure);
    com.google.rpc.Status rich = StatusProto.fromThrowable(failure);
    List<Message> details = new ArrayList<>();
    if (rich != null) {
      for (Any any : rich.getDetailsList()) {
        unpack(any).ifPresent(details::add);
      }
    }
    return new MemorydError(
        status.getCode(), status.getDescription() == null ? "" : status.getDescription(), details);
  }

  private static Optional<Message> unpack(Any any) {
    try {
      if (any.is(ErrorInfo.class)) {
        return Optional.of(any.unpack(ErrorInfo.class));
      }
      if (any.is(BadRequest.class)) {
        return Optional.of(any.unpack(BadRequest.class));
      }
      if (any.is(RetryInfo.class)) {
        return Optional.of(any.unpack(RetryInfo.class));
      }
    } catch (InvalidProtocolBufferException e) {
      // A detail that does not parse is left out; the status code still tells what happened.
    }
    return Optional.empty();
  }

  public Status.Code code() {
    return code;
  }

  public String message() {
    return message;
  }

  /** The unpacked details (ErrorInfo, BadRequest, RetryInfo). */
  public List<Message> details() {
    return details;
  }

  private <T extends Message> Optional<T> detail(Class<T> type) {
    return details.stream().filter(type::isInstance).map(type::cast).findFirst();
  }

  /** ErrorInfo.reason, the stable machine-readable cause ("" when absent). */
  public String reason() {
    return detail(ErrorInfo.class).map(ErrorInfo::getReason).orElse("");
  }

  /** ErrorInfo.metadata (empty when absent), e.g. {@code oldest_seq} of EVENTS_COMPACTED. */
  public Map<String, String> metadata() {
    return detail(ErrorInfo.class).map(ErrorInfo::getMetadataMap).orElse(Map.of());
  }

  /** BadRequest field violations (empty when absent). */
  public List<BadRequest.FieldViolation> fieldViolations() {
    return detail(BadRequest.class).map(BadRequest::getFieldViolationsList).orElse(List.of());
  }

  /** RetryInfo.retry_delay, when the server suggested one. */
  public Optional<Duration> retryDelay() {
    return detail(RetryInfo.class)
        .map(RetryInfo::getRetryDelay)
        .map(d -> Duration.ofSeconds(d.getSeconds(), d.getNanos()));
  }

  @Override
  public String toString() {
    return code + ": " + message + (reason().isEmpty() ? "" : " (" + reason() + ")");
  }
}
