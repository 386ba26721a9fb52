package dev.memoryd.client;

import dev.memoryd.v1.SaveMessageRequest;
import dev.memoryd.v1.SaveMessagesRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.concurrent.TimeUnit;

/** The conventions every call on a {@link MemorydClient} channel follows. */
final class Interceptors {
  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private Interceptors() {}

  /** Sends {@code authorization: Bearer <token>} on every call, asking {@code token} for it each time. */
  static ClientInterceptor bearerToken(Supplier<String> token) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            headers.put(AUTHORIZATION, "Bearer " + token.get());
            super.start(listener, headers);
          }
        };
      }
    };
  }

  /** Gives every unary call without a deadline of its own this one (streams run without). */
  static ClientInterceptor defaultDeadline(Duration timeout) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        if (method.getType() == MethodDescriptor.MethodType.UNARY && options.getDeadline() == null) {
          options = options.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        return next.newCall(method, options);
      }
    };
  }

  /**
   * Gives every append (SaveMessage, SaveMessages) without an idempotency key a fresh one, once
   * per call: gRPC's retries happen below the interceptor, so every attempt carries the same key
   * and the server stores the message once.
   */
  static ClientInterceptor idempotencyKeys() {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          @SuppressWarnings("unchecked")
          public void sendMessage(Q message) {
            super.sendMessage((Q) withKey(message));
          }
        };
      }
    };
  }

  static Object withKey(Object message) {
    if (message instanceof SaveMessageRequest r && r.getIdempotencyKey().isEmpty()) {
      return r.toBuilder().setIdempotencyKey(newKey()).build();
    }
    if (message instanceof SaveMessagesRequest r && r.getIdempotencyKey().isEmpty()) {
      return r.toBuilder().setIdempotencyKey(newKey()).build();
    }
    return message;
  }

  private static String newKey() {
    return UUID.randomUUID().toString().replace("-", "");
  }
}
