package dev.memoryd.examples;

import dev.memoryd.v1.DeleteMessagesRequest;
import dev.memoryd.v1.Event;
import dev.memoryd.v1.EventServiceGrpc;
import dev.memoryd.v1.EventType;
import dev.memoryd.v1.GetHistoryRequest;
import dev.memoryd.v1.MemoryServiceGrpc;
import dev.memoryd.v1.Message;
import dev.memoryd.v1.SaveMessageRequest;
import dev.memoryd.v1.WatchRequest;
import dev.memoryd.v1.WatchResponse;
import io.grpc.ClientCall;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Saves a few messages, reads the history, and watches for deletions while deleting one.
 *
 * <pre>mvn -q compile exec:java -Dexec.args="127.0.0.1:50051 [token]"</pre>
 */
public final class WatchDeletions {

  /** What the scenario observed. */
  public record Outcome(
      List<Message> saved,
      List<Message> history,
      long deletedCount,
      Event deletion,
      List<Message> historyAfter) {}

  private WatchDeletions() {}

  public static Outcome run(ManagedChannel channel, String sessionId) throws Exception {
    // Every unary call gets its own deadline.
    MemoryServiceGrpc.MemoryServiceBlockingStub memory = MemoryServiceGrpc.newBlockingStub(channel);
    EventServiceGrpc.EventServiceStub events = EventServiceGrpc.newStub(channel);

    List<Message> saved = new ArrayList<>();
    String[][] turns = {
      {"user", "What is the capital of France?"}, {"assistant", "Paris."}, {"user", "And of Italy?"}
    };
    for (String[] turn : turns) {
      saved.add(
          memory
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .saveMessage(
                  SaveMessageRequest.newBuilder()
                      .setSessionId(sessionId)
                      .setMessage(Message.newBuilder().setRole(turn[0]).setContent(turn[1]))
                      .build())
              .getMessage());
    }
    List<Message> history =
        memory
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .getHistory(GetHistoryRequest.newBuilder().setSessionId(sessionId).build())
            .getMessagesList();

    // Watch from now. The server sends the response headers once the watch is
    // registered, so the deletion is issued only after they arrive.
    CompletableFuture<Void> registered = new CompletableFuture<>();
    CompletableFuture<Event> deletion = new CompletableFuture<>();
    ClientResponseObserver<WatchRequest, WatchResponse> observer =
        new ClientResponseObserver<>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<WatchRequest> call) {}

          @Override
          public void onNext(WatchResponse response) {
            if (response.hasEvent()) {
              deletion.complete(response.getEvent());
            }
          }

          @Override
          public void onError(Throwable t) {
            registered.completeExceptionally(t);
            deletion.completeExceptionally(t);
          }

          @Override
          public void onCompleted() {
            deletion.completeExceptionally(new IllegalStateException("watch ended"));
          }
        };
    io.grpc.Context.CancellableContext watchContext = io.grpc.Context.current().withCancellation();
    try {
      watchContext.run(
          () ->
              events
                  .withInterceptors(onHeaders(registered))
                  .watch(
                      WatchRequest.newBuilder()
                          .addSessionIds(sessionId)
                          .addTypes(EventType.EVENT_TYPE_MESSAGES_DELETED)
                          .build(),
                      observer));
      registered.get(10, TimeUnit.SECONDS);

      long deletedCount =
          memory
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .deleteMessages(
                  DeleteMessagesRequest.newBuilder()
                      .setSessionId(sessionId)
                      .addIds(saved.get(1).getId())
                      .build())
              .getDeletedCount();
      Event event = deletion.get(10, TimeUnit.SECONDS);

      List<Message> after =
          memory
              .withDeadlineAfter(10, TimeUnit.SECONDS)
              .getHistory(GetHistoryRequest.newBuilder().setSessionId(sessionId).build())
              .getMessagesList();
      return new Outcome(saved, history, deletedCount, event, after);
    } finally {
      watchContext.cancel(null);
    }
  }

  /** Completes `registered` when the call's response headers arrive. */
  private static io.grpc.ClientInterceptor onHeaders(CompletableFuture<Void> registered) {
    return new io.grpc.ClientInterceptor() {
      @Override
      public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
          io.grpc.MethodDescriptor<ReqT, RespT> method,
          io.grpc.CallOptions options,
          io.grpc.Channel next) {
        return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
          @Override
          public void start(Listener<RespT> listener, Metadata headers) {
            super.start(
                new SimpleForwardingClientCallListener<>(listener) {
                  @Override
                  public void onHeaders(Metadata responseHeaders) {
                    registered.complete(null);
                    super.onHeaders(responseHeaders);
                  }
                },
                headers);
          }
        };
      }
    };
  }

  /** A plaintext channel; with a token, every call carries `authorization: Bearer <token>`. */
  public static ManagedChannel channel(String target, String token) {
    var builder = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create());
    if (token != null) {
      Metadata auth = new Metadata();
      auth.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
      builder.intercept(MetadataUtils.newAttachHeadersInterceptor(auth));
    }
    return builder.build();
  }

  public static void main(String[] args) throws Exception {
    String target = args.length > 0 ? args[0] : "127.0.0.1:50051";
    String token = args.length > 1 ? args[1] : null;
    String sessionId = "example-" + UUID.randomUUID().toString().substring(0, 8);
    ManagedChannel channel = channel(target, token);
    try {
      Outcome outcome = run(channel, sessionId);
      System.out.println("session " + sessionId);
      for (Message m : outcome.history()) {
        System.out.printf("  #%d %s: %s%n", m.getSeq(), m.getRole(), m.getContent());
      }
      System.out.printf(
          "deleted %d; event seq %d: ids %s%n",
          outcome.deletedCount(),
          outcome.deletion().getSeq(),
          outcome.deletion().getMessagesDeleted().getIdsList());
      System.out.println(
          "history now: " + outcome.historyAfter().stream().map(Message::getContent).toList());
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
