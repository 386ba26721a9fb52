package dev.memoryd.client;

import dev.memoryd.v1.Event;
import dev.memoryd.v1.EventServiceGrpc;
import dev.memoryd.v1.WatchRequest;
import dev.memoryd.v1.WatchResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * EventService.Watch that resumes from its last seq: the events, in seq order, across reconnects.
 *
 * <p>When the stream ends with UNAVAILABLE, RESOURCE_EXHAUSTED (the watcher fell behind),
 * cleanly (a server shutting down) or, on a client with a token provider, with UNAUTHENTICATED
 * reason TOKEN_EXPIRED (servers end a stream when its token expires), the watch reopens it with {@code after_seq} = the seq of the
 * last event it delivered, or of the latest progress notification, so every event arrives exactly
 * once. A resume point older than the server's retention fails with OUT_OF_RANGE, reason
 * EVENTS_COMPACTED ({@link MemorydError#reason}): resync, then watch again. Not thread-safe except
 * {@link #close}, which may come from any thread.
 */
public final class EventWatch implements AutoCloseable {
  private static final Duration INITIAL_BACKOFF = Duration.ofMillis(100);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

  private final Channel channel;
  private final boolean renewsTokens; // the client has a token provider: resume after expiry
  private final WatchRequest filters;
  private Long lastSeq;
  private int reconnects;
  private int failures; // consecutive reopenings without receiving anything
  private volatile boolean closed;
  private Stream stream;

  EventWatch(Channel channel, WatchRequest request, boolean renewsTokens) {
    this.channel = channel;
    this.renewsTokens = renewsTokens;
    this.filters = request.toBuilder().clearAfterSeq().build();
    this.lastSeq = request.hasAfterSeq() ? request.getAfterSeq() : null;
  }

  /** Seq to resume from (last event delivered or progress seen); null: from now. */
  public synchronized Long lastSeq() {
    return lastSeq;
  }

  /** How many times the stream was reopened. */
  public synchronized int reconnects() {
    return reconnects;
  }

  /**
   * Opens the stream now and waits until the server has registered the watch (it sends its
   * response headers then): nothing written after this returns is missed.
   */
  public void awaitStarted(Duration timeout) throws InterruptedException, TimeoutException {
    Stream current = open();
    try {
      current.headers.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      throw (StatusRuntimeException) e.getCause();
    }
  }

  /**
   * The next event, waiting at most {@code timeout}; null when none came in time (or the watch was
   * closed). Throws StatusRuntimeException when the watch cannot go on.
   */
  public Event poll(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!closed) {
      Stream current = open();
      Object item = current.items.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      if (item == null) {
        return null;
      }
      if (item instanceof WatchResponse response) {
        current.call.request(1);
        Event event = receive(response);
        if (event != null) {
          return event;
        }
      } else {
        ended(current, (Closed) item);
      }
    }
    return null;
  }

  /** The next event, waiting as long as it takes. */
  public Event take() throws InterruptedException {
    Event event;
    do {
      event = poll(Duration.ofDays(1));
    } while (event == null && !closed);
    return event;
  }

  @Override
  public void close() {
    closed = true;
    Stream current;
    synchronized (this) {
      current = stream;
      stream = null;
    }
    if (current != null) {
      current.call.cancel("watch closed", null);
    }
  }

  private synchronized Event receive(WatchResponse response) {
    failures = 0;
    if (response.hasEvent()) {
      lastSeq = response.getEvent().getSeq();
      return response.getEvent();
    }
    if (response.hasProgress()) {
      lastSeq = Math.max(lastSeq == null ? 0 : lastSeq, response.getProgress().getLatestSeq());
    }
    return null;
  }

  private void ended(Stream current, Closed end) throws InterruptedException {
    synchronized (this) {
      if (stream == current) {
        stream = null;
      }
    }
    if (closed) {
      return;
    }
    Status.Code code = end.status().getCode();
    boolean expired =
        renewsTokens
            && code == Status.Code.UNAUTHENTICATED
            && MemorydError.TOKEN_EXPIRED.equals(MemorydError.from(end.status().asRuntimeException(end.trailers())).reason());
    if (code != Status.Code.OK && code != Status.Code.UNAVAILABLE && code != Status.Code.RESOURCE_EXHAUSTED && !expired) {
      throw end.status().asRuntimeException(end.trailers()); // the trailers carry the google.rpc details
    }
    long backoff = Math.min(MAX_BACKOFF.toMillis(), INITIAL_BACKOFF.toMillis() << Math.min(failures, 16));
    synchronized (this) {
      failures++;
      reconnects++;
    }
    Thread.sleep(ThreadLocalRandom.current().nextLong(backoff / 2, backoff + 1));
  }

  private synchronized Stream open() {
    if (stream == null) {
      WatchRequest.Builder request = filters.toBuilder();
      if (lastSeq != null) {
        request.setAfterSeq(lastSeq);
      }
      stream = new Stream(channel.newCall(EventServiceGrpc.getWatchMethod(), CallOptions.DEFAULT));
      stream.start(request.build());
    }
    return stream;
  }

  /** One Watch call: its responses and final status go into a queue the reader takes from. */
  private static final class Stream extends ClientCall.Listener<WatchResponse> {
    final ClientCall<WatchRequest, WatchResponse> call;
    final LinkedBlockingQueue<Object> items = new LinkedBlockingQueue<>();
    final CompletableFuture<Void> headers = new CompletableFuture<>();

    Stream(ClientCall<WatchRequest, WatchResponse> call) {
      this.call = call;
    }

    void start(WatchRequest request) {
      call.start(this, new Metadata());
      call.sendMessage(request);
      call.halfClose();
      call.request(1);
    }

    @Override
    public void onHeaders(Metadata responseHeaders) {
      headers.complete(null);
    }

    @Override
    public void onMessage(WatchResponse message) {
      items.add(message);
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      headers.completeExceptionally(status.asRuntimeException(trailers));
      items.add(new Closed(status, trailers));
    }
  }

  private record Closed(Status status, Metadata trailers) {}
}
