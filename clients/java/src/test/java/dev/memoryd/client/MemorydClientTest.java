package dev.memoryd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.rpc.BadRequest;
import dev.memoryd.v1.ClearSessionRequest;
import dev.memoryd.v1.Event;
import dev.memoryd.v1.EventType;
import dev.memoryd.v1.GetHistoryRequest;
import dev.memoryd.v1.MemoryServiceGrpc.MemoryServiceBlockingStub;
import dev.memoryd.v1.Message;
import dev.memoryd.v1.SaveMessageRequest;
import dev.memoryd.v1.SaveMessageResponse;
import dev.memoryd.v1.WatchRequest;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The helper layer against a live memoryd, faults injected by the proxy in front of it. */
class MemorydClientTest {
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static Path bin;
  private static Memoryd server;
  private static Memoryd proxy;

  @BeforeAll
  static void start() throws Exception {
    bin = Memoryd.executable();
    boolean found = bin != null && bin.toFile().canExecute();
    if (!found && "1".equals(System.getenv("MEMORYD_REQUIRE_SERVER"))) {
      throw new IllegalStateException("memoryd not found: set MEMORYD_BIN");
    }
    assumeTrue(found, "memoryd not found (set MEMORYD_BIN)");
    server = Memoryd.start(bin, Map.of());
    proxy = Memoryd.proxy(bin, server);
  }

  @AfterAll
  static void stop() throws Exception {
    if (proxy != null) {
      proxy.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private static String session() {
    return "java-" + UUID.randomUUID();
  }

  private static Message user(String content) {
    return Message.newBuilder().setRole("user").setContent(content).build();
  }

  /** Per-call proxy instruction, e.g. fault("memoryd-test-fault", "UNAVAILABLE", 2). */
  private static MemoryServiceBlockingStub withFault(MemoryServiceBlockingStub stub, String header, String code, int n) {
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of(header, Metadata.ASCII_STRING_MARSHALLER), code + ":" + n + ":" + UUID.randomUUID());
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
  }

  @Test
  void invalidArgumentCarriesTheGoogleRpcDetails() throws Exception {
    try (MemorydClient client = MemorydClient.connect(server.target, MemorydClient.options())) {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId("").setLimit(-1).build()));

      MemorydError error = MemorydError.from(e);
      assertEquals(Status.Code.INVALID_ARGUMENT, error.code());
      TreeSet<String> fields = new TreeSet<>();
      for (BadRequest.FieldViolation v : error.fieldViolations()) {
        fields.add(v.getField());
      }
      assertEquals(List.of("limit", "session_id"), List.copyOf(fields));
      assertFalse(error.reason().isEmpty());
    }
  }

  @Test
  void idempotentCallsAreRetriedAndOthersAreNot() throws Exception {
    String session = session();
    try (MemorydClient client = MemorydClient.connect(proxy.target, MemorydClient.options())) {
      SaveMessageResponse saved =
          withFault(client.memory(), "memoryd-test-fault", "UNAVAILABLE", 2)
              .saveMessage(SaveMessageRequest.newBuilder().setSessionId(session).setMessage(user("hi")).build());
      assertEquals("hi", saved.getMessage().getContent());

      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> withFault(client.memory(), "memoryd-test-fault", "UNAVAILABLE", 1)
                  .clearSession(ClearSessionRequest.newBuilder().setSessionId(session).build()));
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
      assertEquals(1, client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build()).getMessagesCount());
    }
  }

  @Test
  void aNullServiceConfigTurnsRetriesOff() throws Exception {
    String session = session();
    try (MemorydClient client = MemorydClient.connect(proxy.target, MemorydClient.options().serviceConfig(null))) {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> withFault(client.memory(), "memoryd-test-fault", "UNAVAILABLE", 1)
                  .saveMessage(SaveMessageRequest.newBuilder().setSessionId(session).setMessage(user("hi")).build()));
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
      assertEquals(0, client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build()).getMessagesCount());
    }
  }

  @Test
  void aRetryAfterALostAcknowledgementStoresOnce() throws Exception {
    String session = session();
    try (MemorydClient client = MemorydClient.connect(proxy.target, MemorydClient.options())) {
      // No idempotency key in the request: the client adds one, the same on both attempts.
      SaveMessageResponse saved =
          withFault(client.memory(), "memoryd-test-lost-ack", "UNAVAILABLE", 1)
              .saveMessage(SaveMessageRequest.newBuilder().setSessionId(session).setMessage(user("once")).build());

      assertTrue(saved.getDeduplicated());
      assertEquals(1, client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build()).getMessagesCount());
    }
  }

  @Test
  void everyUnaryCallGetsTheDefaultDeadlineButWatchDoesNot() throws Exception {
    String session = session();
    MemorydClient.Options hurried = MemorydClient.options().timeout(Duration.ofNanos(1));
    try (MemorydClient client = MemorydClient.connect(server.target, hurried);
        MemorydClient patient = MemorydClient.connect(server.target, MemorydClient.options());
        EventWatch events = client.watch(WatchRequest.newBuilder().addSessionIds(session).build())) {
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build()));
      assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());

      events.awaitStarted(WAIT);
      patient.memory().saveMessage(SaveMessageRequest.newBuilder().setSessionId(session).setMessage(user("hi")).build());
      Event event = events.poll(WAIT);
      assertNotNull(event);
      assertEquals(EventType.EVENT_TYPE_MESSAGES_APPENDED, event.getType());
    }
  }

  @Test
  void watchResumesFromItsLastSeq() throws Exception {
    String session = session();
    Metadata cut = new Metadata();
    cut.put(Metadata.Key.of("memoryd-test-cut", Metadata.ASCII_STRING_MARSHALLER), "UNAVAILABLE:2:" + UUID.randomUUID());
    MemorydClient.Options options = MemorydClient.options().interceptor(MetadataUtils.newAttachHeadersInterceptor(cut));
    try (MemorydClient client = MemorydClient.connect(proxy.target, options);
        EventWatch events =
            client.watch(
                WatchRequest.newBuilder()
                    .addSessionIds(session)
                    .addTypes(EventType.EVENT_TYPE_MESSAGES_APPENDED)
                    .build())) {
      events.awaitStarted(WAIT);
      List<String> saved = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        saved.add(
            client.memory()
                .saveMessage(SaveMessageRequest.newBuilder().setSessionId(session).setMessage(user("m" + i)).build())
                .getMessage()
                .getId());
      }
      List<String> received = new ArrayList<>();
      long previous = 0;
      for (int i = 0; i < saved.size(); i++) {
        Event event = events.poll(WAIT);
        assertNotNull(event, "event " + i);
        assertTrue(event.getSeq() > previous, "seqs increase");
        previous = event.getSeq();
        received.add(event.getMessagesAppended().getMessages(0).getId());
      }

      assertEquals(saved, received); // every event once, in order, across the cut
      assertEquals(1, events.reconnects());
      assertEquals(previous, events.lastSeq());
    }
  }

  @Test
  void theBearerTokenSelectsTheTenant() throws Exception {
    String session = session();
    try (Memoryd secured = Memoryd.start(bin, Map.of("MEMORYD_TOKENS", "acme: token-acme-0123456789"));
        MemorydClient acme = MemorydClient.connect(secured.target, MemorydClient.options().token("token-acme-0123456789"));
        MemorydClient anonymous = MemorydClient.connect(secured.target, MemorydClient.options())) {
      acme.memory().saveMessage(SaveMessageRequest.newBuilder().setSessionId(session).setMessage(user("hi")).build());

      assertEquals(1, acme.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build()).getMessagesCount());
      StatusRuntimeException e =
          assertThrows(
              StatusRuntimeException.class,
              () -> anonymous.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build()));
      assertEquals(Status.Code.UNAUTHENTICATED, MemorydError.from(e).code());
    }
  }

  /** Mints tokens of {@code tenant} living {@code lifetime} seconds at the test issuer; counts calls. */
  private static final class Minting implements Supplier<String> {
    final AtomicInteger calls = new AtomicInteger();
    volatile boolean broken;
    private final String url;
    private final HttpClient http = HttpClient.newHttpClient();

    Minting(Memoryd issuer, String tenant, int lifetime) {
      url = "http://" + issuer.target + "/mint?tenant=" + tenant + "&lifetime=" + lifetime;
    }

    @Override
    public String get() {
      calls.incrementAndGet();
      if (broken) {
        return "not.a.token";
      }
      try {
        return http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString()).body();
      } catch (IOException | InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static Memoryd jwtServer(Memoryd issuer) throws Exception {
    return Memoryd.start(bin, Map.of("MEMORYD_OIDC_ISSUER", "http://" + issuer.target,
        "MEMORYD_JWT_AUDIENCE", "memoryd-test", "MEMORYD_JWT_LEEWAY_SECONDS", "0"));
  }

  @Test
  void theTokenProviderGivesEveryCallItsToken() throws Exception {
    String session = session();
    try (Memoryd issuer = Memoryd.issuer(bin); Memoryd secured = jwtServer(issuer)) {
      Minting provider = new Minting(issuer, "t-" + UUID.randomUUID(), 600);
      try (MemorydClient client = MemorydClient.connect(secured.target, MemorydClient.options().tokenProvider(provider))) {
        client.memory().saveMessage(SaveMessageRequest.newBuilder().setSessionId(session).setMessage(user("hi")).build());
        assertEquals(1, client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build()).getMessagesCount());
        assertEquals(2, provider.calls.get());
        provider.broken = true; // the server sees the provider's token, call by call
        StatusRuntimeException e =
            assertThrows(
                StatusRuntimeException.class,
                () -> client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build()));
        assertEquals(Status.Code.UNAUTHENTICATED, MemorydError.from(e).code());
        assertEquals("TOKEN_INVALID", MemorydError.from(e).reason());
        provider.broken = false;
        assertEquals(1, client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build()).getMessagesCount());
      }
      assertThrows(
          IllegalArgumentException.class,
          () -> MemorydClient.connect(secured.target, MemorydClient.options().token("x").tokenProvider(provider)));
    }
  }

  @Test
  void aWatchResumesWithAFreshTokenWhenItsTokenExpires() throws Exception {
    try (Memoryd issuer = Memoryd.issuer(bin); Memoryd secured = jwtServer(issuer)) {
      Minting provider = new Minting(issuer, "t-" + UUID.randomUUID(), 2);
      try (MemorydClient client = MemorydClient.connect(secured.target, MemorydClient.options().tokenProvider(provider));
          EventWatch watch = client.watch(WatchRequest.newBuilder().setAfterSeq(0).build())) {
        watch.awaitStarted(WAIT);
        List<Long> seqs = new ArrayList<>();
        for (int i = 0; i < 3; i++) { // each save after the previous token expired: the stream ends and resumes
          client.memory().saveMessage(SaveMessageRequest.newBuilder().setSessionId("w").setMessage(user("m" + i)).build());
          Event event = watch.poll(WAIT);
          assertNotNull(event);
          seqs.add(event.getMessagesAppended().getMessages(0).getSeq());
          Thread.sleep(2500);
        }
        assertEquals(List.of(1L, 2L, 3L), seqs);
        assertTrue(watch.reconnects() >= 1);
      }
    }
  }
}
