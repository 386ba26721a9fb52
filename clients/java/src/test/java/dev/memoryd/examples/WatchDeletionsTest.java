package dev.memoryd.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.google.rpc.BadRequest;
import dev.memoryd.v1.EventType;
import dev.memoryd.v1.GetHistoryRequest;
import dev.memoryd.v1.MemoryServiceGrpc;
import dev.memoryd.v1.Message;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class WatchDeletionsTest {
  private static Memoryd server;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() throws Exception {
    Path bin = Memoryd.executable();
    if (bin == null && "1".equals(System.getenv("MEMORYD_REQUIRE_SERVER"))) {
      throw new IllegalStateException("memoryd not found: set MEMORYD_BIN");
    }
    assumeTrue(bin != null, "memoryd not found (set MEMORYD_BIN)");
    server = Memoryd.start(bin);
    channel = WatchDeletions.channel(server.target, null);
  }

  @AfterAll
  static void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close();
    }
  }

  private static List<String> ids(List<Message> messages) {
    return messages.stream().map(Message::getId).toList();
  }

  @Test
  void savesReadsAndSeesTheDeletionItWatchesFor() throws Exception {
    String session = "java-" + UUID.randomUUID();

    WatchDeletions.Outcome out = WatchDeletions.run(channel, session);

    assertEquals(ids(out.saved()), ids(out.history()));
    assertEquals(
        List.of("What is the capital of France?", "Paris.", "And of Italy?"),
        out.history().stream().map(Message::getContent).toList());
    for (int i = 1; i < out.history().size(); i++) {
      assertTrue(out.history().get(i).getSeq() > out.history().get(i - 1).getSeq());
    }
    assertEquals(1, out.deletedCount());
    Message gone = out.saved().get(1);
    assertEquals(EventType.EVENT_TYPE_MESSAGES_DELETED, out.deletion().getType());
    assertEquals(session, out.deletion().getSessionId());
    assertEquals(List.of(gone.getId()), out.deletion().getMessagesDeleted().getIdsList());
    assertEquals(List.of(gone.getTimestamp()), out.deletion().getMessagesDeleted().getTimestampsList());
    assertEquals(List.of(out.saved().get(0).getId(), out.saved().get(2).getId()), ids(out.historyAfter()));
  }

  @Test
  void invalidArgumentCarriesBadRequest() throws Exception {
    StatusRuntimeException error =
        org.junit.jupiter.api.Assertions.assertThrows(
            StatusRuntimeException.class,
            () ->
                MemoryServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getHistory(GetHistoryRequest.newBuilder().setSessionId("").setLimit(-1).build()));

    assertEquals(Status.Code.INVALID_ARGUMENT, error.getStatus().getCode());
    com.google.rpc.Status status = StatusProto.fromThrowable(error);
    assertNotNull(status);
    TreeSet<String> fields = new TreeSet<>();
    for (com.google.protobuf.Any detail : status.getDetailsList()) {
      if (detail.is(BadRequest.class)) {
        detail.unpack(BadRequest.class).getFieldViolationsList().forEach(v -> fields.add(v.getField()));
      }
    }
    assertEquals(new TreeSet<>(List.of("limit", "session_id")), fields);
  }
}
