package dev.memoryd.client;

import dev.memoryd.v1.EntryServiceGrpc;
import dev.memoryd.v1.EventServiceGrpc;
import dev.memoryd.v1.MemoryServiceGrpc;
import dev.memoryd.v1.MetadataServiceGrpc;
import dev.memoryd.v1.SummaryServiceGrpc;
import dev.memoryd.v1.VectorServiceGrpc;
import dev.memoryd.v1.WatchRequest;
import io.grpc.Channel;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A channel to memoryd with the client conventions, and blocking stubs of its six services.
 *
 * <pre>{@code
 * try (MemorydClient client = MemorydClient.connect("127.0.0.1:50051", MemorydClient.options())) {
 *   client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId("s1").build());
 * }
 * }</pre>
 *
 * <p>Every call on {@link #channel()} (so every stub, blocking or async, built on it) gets the
 * bearer token, a deadline when it has none (unary calls), an idempotency key when it is an
 * append without one, and gRPC retries on UNAVAILABLE for the RPCs the contract's service
 * config marks idempotent. Failed calls throw {@code StatusRuntimeException}; {@link
 * MemorydError#from} decodes its google.rpc details.
 */
public final class MemorydClient implements AutoCloseable {
  /** Deadline of unary calls unless {@link Options#timeout} says otherwise. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  private final ManagedChannel managed;
  private final Channel channel;
  private final boolean renewsTokens; // a token provider: a Watch resumes after its token expired

  private MemorydClient(ManagedChannel managed, Channel channel, boolean renewsTokens) {
    this.managed = managed;
    this.channel = channel;
    this.renewsTokens = renewsTokens;
  }

  /** Options with the defaults: plaintext, no token, 10 s deadline, the contract's retries. */
  public static Options options() {
    return new Options();
  }

  /** Connects (lazily, as gRPC channels do) to {@code target}, "host:port". */
  public static MemorydClient connect(String target, Options options) {
    ManagedChannelBuilder<?> builder = Grpc.newChannelBuilder(target, options.credentials);
    if (options.serviceConfig != null) {
      builder.defaultServiceConfig(options.serviceConfig).enableRetry();
    } else {
      builder.disableRetry();
    }
    ManagedChannel managed = builder.build();
    Channel channel =
        ClientInterceptors.intercept(
            managed, Interceptors.idempotencyKeys(), Interceptors.defaultDeadline(options.timeout));
    if (options.token != null && options.tokenProvider != null) {
      managed.shutdownNow();
      throw new IllegalArgumentException("set either a token or a token provider");
    }
    if (options.token != null) {
      String token = options.token;
      channel = ClientInterceptors.intercept(channel, Interceptors.bearerToken(() -> token));
    } else if (options.tokenProvider != null) {
      channel = ClientInterceptors.intercept(channel, Interceptors.bearerToken(options.tokenProvider));
    }
    channel = ClientInterceptors.intercept(channel, options.interceptors);
    return new MemorydClient(managed, channel, options.tokenProvider != null);
  }

  /** The channel with the conventions; build any other stub (async, future) on it. */
  public Channel channel() {
    return channel;
  }

  public MemoryServiceGrpc.MemoryServiceBlockingStub memory() {
    return MemoryServiceGrpc.newBlockingStub(channel);
  }

  public MetadataServiceGrpc.MetadataServiceBlockingStub metadata() {
    return MetadataServiceGrpc.newBlockingStub(channel);
  }

  public EventServiceGrpc.EventServiceBlockingStub events() {
    return EventServiceGrpc.newBlockingStub(channel);
  }

  public VectorServiceGrpc.VectorServiceBlockingStub vectors() {
    return VectorServiceGrpc.newBlockingStub(channel);
  }

  public SummaryServiceGrpc.SummaryServiceBlockingStub summaries() {
    return SummaryServiceGrpc.newBlockingStub(channel);
  }

  public EntryServiceGrpc.EntryServiceBlockingStub entries() {
    return EntryServiceGrpc.newBlockingStub(channel);
  }

  /**
   * Watches the event log from {@code request.after_seq} (absent: from now), resuming from the
   * last seq it saw when the stream breaks. Close the watch to stop.
   */
  public EventWatch watch(WatchRequest request) {
    return new EventWatch(channel, request, renewsTokens);
  }

  @Override
  public void close() throws InterruptedException {
    managed.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  /** How to connect. Mutable builder; {@link #connect} copies what it needs. */
  public static final class Options {
    private ChannelCredentials credentials = InsecureChannelCredentials.create();
    private String token;
    private Supplier<String> tokenProvider;
    private Duration timeout = DEFAULT_TIMEOUT;
    private Map<String, ?> serviceConfig = ServiceConfig.contract();
    private final List<ClientInterceptor> interceptors = new ArrayList<>();

    private Options() {}

    /** An interceptor of your own (tracing, headers, ...), run before the client's. */
    public Options interceptor(ClientInterceptor interceptor) {
      interceptors.add(interceptor);
      return this;
    }

    /** Bearer token sent as {@code authorization: Bearer <token>} on every call. */
    public Options token(String token) {
      this.token = token;
      return this;
    }

    /**
     * Instead of {@link #token}: gives the bearer token of each call. It is called for every call
     * and every (re)opening of a Watch stream, so it can hand out a fresh JWT before the old one
     * expires (cache it and refresh it near its exp: it is called often, on the calling thread). A
     * Watch stream the server ends because its token expired (UNAUTHENTICATED, reason
     * TOKEN_EXPIRED) resumes with the next token.
     */
    public Options tokenProvider(Supplier<String> tokenProvider) {
      this.tokenProvider = tokenProvider;
      return this;
    }

    /**
     * TLS (or mTLS) credentials, e.g. {@code TlsChannelCredentials.newBuilder()
     * .trustManager(caFile).build()}; the default is a plaintext channel.
     */
    public Options credentials(ChannelCredentials credentials) {
      this.credentials = credentials;
      return this;
    }

    /** Deadline of unary calls that have none of their own ({@code withDeadlineAfter} wins). */
    public Options timeout(Duration timeout) {
      this.timeout = timeout;
      return this;
    }

    /** Another service config (e.g. other backoff numbers); null turns retries off. */
    public Options serviceConfig(Map<String, ?> serviceConfig) {
      this.serviceConfig = serviceConfig;
      return this;
    }
  }
}
