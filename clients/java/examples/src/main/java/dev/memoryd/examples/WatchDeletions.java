package dev.memoryd.examples;

import dev.memoryd.client.EventWatch;
import dev.memoryd.client.MemorydClient;
import dev.memoryd.client.MemorydError;
import dev.memoryd.v1.DeleteMessagesRequest;
import dev.memoryd.v1.Event;
import dev.memoryd.v1.EventType;
import dev.memoryd.v1.GetHistoryRequest;
import dev.memoryd.v1.Message;
import dev.memoryd.v1.SaveMessageRequest;
import dev.memoryd.v1.WatchRequest;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Saves a few messages, reads the history, and watches for deletions while deleting one.
 *
 * <pre>mvn -q compile exec:java -Dexec.args="127.0.0.1:50051 [token] [ca.pem]"</pre>
 */
public final class WatchDeletions {
  private WatchDeletions() {}

  public static void main(String[] args) throws Exception {
    String target = args.length > 0 ? args[0] : "127.0.0.1:50051";
    String token = args.length > 1 && !args[1].isEmpty() ? args[1] : null;
    String session = "example-" + UUID.randomUUID().toString().substring(0, 8);
    MemorydClient.Options options = MemorydClient.options().token(token);
    if (args.length > 2) { // a CA bundle: connect over TLS
      options.credentials(TlsChannelCredentials.newBuilder().trustManager(new File(args[2])).build());
    }
    try (MemorydClient client = MemorydClient.connect(target, options)) {
      List<Message> saved = new ArrayList<>();
      for (String[] turn : new String[][] {
          {"user", "What is the capital of France?"}, {"assistant", "Paris."}, {"user", "And of Italy?"}}) {
        saved.add(client.memory().saveMessage(SaveMessageRequest.newBuilder()
                .setSessionId(session)
                .setMessage(Message.newBuilder().setRole(turn[0]).setContent(turn[1]))
                .build())
            .getMessage());
      }
      List<Message> history = client.memory()
          .getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build())
          .getMessagesList();
      System.out.println("session " + session);
      for (Message m : history) {
        System.out.printf("  #%d %s: %s%n", m.getSeq(), m.getRole(), m.getContent());
      }

      try (EventWatch deletions = client.watch(WatchRequest.newBuilder()
          .addSessionIds(session)
          .addTypes(EventType.EVENT_TYPE_MESSAGES_DELETED)
          .build())) {
        deletions.awaitStarted(Duration.ofSeconds(10)); // registered: the deletion cannot slip in first
        long deleted = client.memory().deleteMessages(DeleteMessagesRequest.newBuilder()
                .setSessionId(session)
                .addIds(saved.get(1).getId())
                .build())
            .getDeletedCount();
        Event event = deletions.poll(Duration.ofSeconds(10));
        if (event == null) {
          throw new IllegalStateException("no deletion event within 10 s");
        }
        System.out.printf("deleted %d; event seq %d: ids %s%n",
            deleted, event.getSeq(), event.getMessagesDeleted().getIdsList());
      }

      List<String> after = client.memory()
          .getHistory(GetHistoryRequest.newBuilder().setSessionId(session).build())
          .getMessagesList().stream().map(Message::getContent).toList();
      System.out.println("history now: " + after);

      try {
        client.memory().getHistory(GetHistoryRequest.newBuilder().setSessionId("").build());
      } catch (StatusRuntimeException e) {
        MemorydError error = MemorydError.from(e);
        System.out.println("invalid request: " + error.code() + " " + error.reason() + " "
            + error.fieldViolations().get(0).getField());
      }
    }
  }
}
