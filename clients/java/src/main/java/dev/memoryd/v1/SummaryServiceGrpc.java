package dev.memoryd.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Summaries of message ranges with a per-session cursor, and context assembly
 * for an LLM prompt under a character budget.
 * memoryd stores and assembles; it never calls an LLM. The caller writes the
 * summary text (with its own model) and saves it here as a slice covering a
 * range of message seqs. The session's summary cursor is the last seq covered
 * by a slice: it only moves forward, so a restarted agent never summarizes the
 * same messages twice.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class SummaryServiceGrpc {

  private SummaryServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "memoryd.v1.SummaryService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SaveSummaryRequest,
      dev.memoryd.v1.SaveSummaryResponse> getSaveSummaryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SaveSummary",
      requestType = dev.memoryd.v1.SaveSummaryRequest.class,
      responseType = dev.memoryd.v1.SaveSummaryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SaveSummaryRequest,
      dev.memoryd.v1.SaveSummaryResponse> getSaveSummaryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SaveSummaryRequest, dev.memoryd.v1.SaveSummaryResponse> getSaveSummaryMethod;
    if ((getSaveSummaryMethod = SummaryServiceGrpc.getSaveSummaryMethod) == null) {
      synchronized (SummaryServiceGrpc.class) {
        if ((getSaveSummaryMethod = SummaryServiceGrpc.getSaveSummaryMethod) == null) {
          SummaryServiceGrpc.getSaveSummaryMethod = getSaveSummaryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SaveSummaryRequest, dev.memoryd.v1.SaveSummaryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SaveSummary"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveSummaryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveSummaryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SummaryServiceMethodDescriptorSupplier("SaveSummary"))
              .build();
        }
      }
    }
    return getSaveSummaryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ListSummariesRequest,
      dev.memoryd.v1.ListSummariesResponse> getListSummariesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListSummaries",
      requestType = dev.memoryd.v1.ListSummariesRequest.class,
      responseType = dev.memoryd.v1.ListSummariesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ListSummariesRequest,
      dev.memoryd.v1.ListSummariesResponse> getListSummariesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ListSummariesRequest, dev.memoryd.v1.ListSummariesResponse> getListSummariesMethod;
    if ((getListSummariesMethod = SummaryServiceGrpc.getListSummariesMethod) == null) {
      synchronized (SummaryServiceGrpc.class) {
        if ((getListSummariesMethod = SummaryServiceGrpc.getListSummariesMethod) == null) {
          SummaryServiceGrpc.getListSummariesMethod = getListSummariesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ListSummariesRequest, dev.memoryd.v1.ListSummariesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListSummaries"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListSummariesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListSummariesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SummaryServiceMethodDescriptorSupplier("ListSummaries"))
              .build();
        }
      }
    }
    return getListSummariesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetSummaryCursorRequest,
      dev.memoryd.v1.GetSummaryCursorResponse> getGetSummaryCursorMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSummaryCursor",
      requestType = dev.memoryd.v1.GetSummaryCursorRequest.class,
      responseType = dev.memoryd.v1.GetSummaryCursorResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetSummaryCursorRequest,
      dev.memoryd.v1.GetSummaryCursorResponse> getGetSummaryCursorMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetSummaryCursorRequest, dev.memoryd.v1.GetSummaryCursorResponse> getGetSummaryCursorMethod;
    if ((getGetSummaryCursorMethod = SummaryServiceGrpc.getGetSummaryCursorMethod) == null) {
      synchronized (SummaryServiceGrpc.class) {
        if ((getGetSummaryCursorMethod = SummaryServiceGrpc.getGetSummaryCursorMethod) == null) {
          SummaryServiceGrpc.getGetSummaryCursorMethod = getGetSummaryCursorMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetSummaryCursorRequest, dev.memoryd.v1.GetSummaryCursorResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSummaryCursor"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetSummaryCursorRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetSummaryCursorResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SummaryServiceMethodDescriptorSupplier("GetSummaryCursor"))
              .build();
        }
      }
    }
    return getGetSummaryCursorMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.AssembleContextRequest,
      dev.memoryd.v1.AssembleContextResponse> getAssembleContextMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "AssembleContext",
      requestType = dev.memoryd.v1.AssembleContextRequest.class,
      responseType = dev.memoryd.v1.AssembleContextResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.AssembleContextRequest,
      dev.memoryd.v1.AssembleContextResponse> getAssembleContextMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.AssembleContextRequest, dev.memoryd.v1.AssembleContextResponse> getAssembleContextMethod;
    if ((getAssembleContextMethod = SummaryServiceGrpc.getAssembleContextMethod) == null) {
      synchronized (SummaryServiceGrpc.class) {
        if ((getAssembleContextMethod = SummaryServiceGrpc.getAssembleContextMethod) == null) {
          SummaryServiceGrpc.getAssembleContextMethod = getAssembleContextMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.AssembleContextRequest, dev.memoryd.v1.AssembleContextResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "AssembleContext"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.AssembleContextRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.AssembleContextResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SummaryServiceMethodDescriptorSupplier("AssembleContext"))
              .build();
        }
      }
    }
    return getAssembleContextMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static SummaryServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SummaryServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SummaryServiceStub>() {
        @java.lang.Override
        public SummaryServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SummaryServiceStub(channel, callOptions);
        }
      };
    return SummaryServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static SummaryServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SummaryServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SummaryServiceBlockingV2Stub>() {
        @java.lang.Override
        public SummaryServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SummaryServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return SummaryServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static SummaryServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SummaryServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SummaryServiceBlockingStub>() {
        @java.lang.Override
        public SummaryServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SummaryServiceBlockingStub(channel, callOptions);
        }
      };
    return SummaryServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static SummaryServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SummaryServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SummaryServiceFutureStub>() {
        @java.lang.Override
        public SummaryServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SummaryServiceFutureStub(channel, callOptions);
        }
      };
    return SummaryServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Summaries of message ranges with a per-session cursor, and context assembly
   * for an LLM prompt under a character budget.
   * memoryd stores and assembles; it never calls an LLM. The caller writes the
   * summary text (with its own model) and saves it here as a slice covering a
   * range of message seqs. The session's summary cursor is the last seq covered
   * by a slice: it only moves forward, so a restarted agent never summarizes the
   * same messages twice.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Saves a summary slice covering the messages [from_seq, to_seq] of a session
     * and advances the session's summary cursor to to_seq. The slice must start
     * right after the cursor (seqs between the cursor and from_seq may only be
     * skipped when no stored message holds them) and must not end beyond the
     * newest seq of the session. A slice that overlaps the cursor, leaves
     * stored messages unsummarized, or reaches past the history is rejected with
     * FAILED_PRECONDITION whose ErrorInfo.reason says which, and whose metadata
     * carries the current cursor. Two racing calls never both advance the cursor.
     * </pre>
     */
    default void saveSummary(dev.memoryd.v1.SaveSummaryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveSummaryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSaveSummaryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Pages through the summary slices of a session, oldest first (slices are
     * created in seq order, so this is also creation-time order).
     * </pre>
     */
    default void listSummaries(dev.memoryd.v1.ListSummariesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListSummariesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSummariesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns the session's summary cursor and its latest slice.
     * </pre>
     */
    default void getSummaryCursor(dev.memoryd.v1.GetSummaryCursorRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSummaryCursorResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetSummaryCursorMethod(), responseObserver);
    }

    /**
     * <pre>
     * Assembles the context of a session for an LLM prompt: the latest summary,
     * the unsummarized tail after the cursor and the newest raw messages
     * (deduplicated by id), and optionally recalled memories, under a character
     * budget. Reports everything it cut and why.
     * </pre>
     */
    default void assembleContext(dev.memoryd.v1.AssembleContextRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.AssembleContextResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getAssembleContextMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service SummaryService.
   * <pre>
   * Summaries of message ranges with a per-session cursor, and context assembly
   * for an LLM prompt under a character budget.
   * memoryd stores and assembles; it never calls an LLM. The caller writes the
   * summary text (with its own model) and saves it here as a slice covering a
   * range of message seqs. The session's summary cursor is the last seq covered
   * by a slice: it only moves forward, so a restarted agent never summarizes the
   * same messages twice.
   * </pre>
   */
  public static abstract class SummaryServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return SummaryServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service SummaryService.
   * <pre>
   * Summaries of message ranges with a per-session cursor, and context assembly
   * for an LLM prompt under a character budget.
   * memoryd stores and assembles; it never calls an LLM. The caller writes the
   * summary text (with its own model) and saves it here as a slice covering a
   * range of message seqs. The session's summary cursor is the last seq covered
   * by a slice: it only moves forward, so a restarted agent never summarizes the
   * same messages twice.
   * </pre>
   */
  public static final class SummaryServiceStub
      extends io.grpc.stub.AbstractAsyncStub<SummaryServiceStub> {
    private SummaryServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SummaryServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SummaryServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves a summary slice covering the messages [from_seq, to_seq] of a session
     * and advances the session's summary cursor to to_seq. The slice must start
     * right after the cursor (seqs between the cursor and from_seq may only be
     * skipped when no stored message holds them) and must not end beyond the
     * newest seq of the session. A slice that overlaps the cursor, leaves
     * stored messages unsummarized, or reaches past the history is rejected with
     * FAILED_PRECONDITION whose ErrorInfo.reason says which, and whose metadata
     * carries the current cursor. Two racing calls never both advance the cursor.
     * </pre>
     */
    public void saveSummary(dev.memoryd.v1.SaveSummaryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveSummaryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSaveSummaryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Pages through the summary slices of a session, oldest first (slices are
     * created in seq order, so this is also creation-time order).
     * </pre>
     */
    public void listSummaries(dev.memoryd.v1.ListSummariesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListSummariesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSummariesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns the session's summary cursor and its latest slice.
     * </pre>
     */
    public void getSummaryCursor(dev.memoryd.v1.GetSummaryCursorRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSummaryCursorResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetSummaryCursorMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Assembles the context of a session for an LLM prompt: the latest summary,
     * the unsummarized tail after the cursor and the newest raw messages
     * (deduplicated by id), and optionally recalled memories, under a character
     * budget. Reports everything it cut and why.
     * </pre>
     */
    public void assembleContext(dev.memoryd.v1.AssembleContextRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.AssembleContextResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getAssembleContextMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service SummaryService.
   * <pre>
   * Summaries of message ranges with a per-session cursor, and context assembly
   * for an LLM prompt under a character budget.
   * memoryd stores and assembles; it never calls an LLM. The caller writes the
   * summary text (with its own model) and saves it here as a slice covering a
   * range of message seqs. The session's summary cursor is the last seq covered
   * by a slice: it only moves forward, so a restarted agent never summarizes the
   * same messages twice.
   * </pre>
   */
  public static final class SummaryServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<SummaryServiceBlockingV2Stub> {
    private SummaryServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SummaryServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SummaryServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves a summary slice covering the messages [from_seq, to_seq] of a session
     * and advances the session's summary cursor to to_seq. The slice must start
     * right after the cursor (seqs between the cursor and from_seq may only be
     * skipped when no stored message holds them) and must not end beyond the
     * newest seq of the session. A slice that overlaps the cursor, leaves
     * stored messages unsummarized, or reaches past the history is rejected with
     * FAILED_PRECONDITION whose ErrorInfo.reason says which, and whose metadata
     * carries the current cursor. Two racing calls never both advance the cursor.
     * </pre>
     */
    public dev.memoryd.v1.SaveSummaryResponse saveSummary(dev.memoryd.v1.SaveSummaryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSaveSummaryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through the summary slices of a session, oldest first (slices are
     * created in seq order, so this is also creation-time order).
     * </pre>
     */
    public dev.memoryd.v1.ListSummariesResponse listSummaries(dev.memoryd.v1.ListSummariesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSummariesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the session's summary cursor and its latest slice.
     * </pre>
     */
    public dev.memoryd.v1.GetSummaryCursorResponse getSummaryCursor(dev.memoryd.v1.GetSummaryCursorRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetSummaryCursorMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Assembles the context of a session for an LLM prompt: the latest summary,
     * the unsummarized tail after the cursor and the newest raw messages
     * (deduplicated by id), and optionally recalled memories, under a character
     * budget. Reports everything it cut and why.
     * </pre>
     */
    public dev.memoryd.v1.AssembleContextResponse assembleContext(dev.memoryd.v1.AssembleContextRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getAssembleContextMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service SummaryService.
   * <pre>
   * Summaries of message ranges with a per-session cursor, and context assembly
   * for an LLM prompt under a character budget.
   * memoryd stores and assembles; it never calls an LLM. The caller writes the
   * summary text (with its own model) and saves it here as a slice covering a
   * range of message seqs. The session's summary cursor is the last seq covered
   * by a slice: it only moves forward, so a restarted agent never summarizes the
   * same messages twice.
   * </pre>
   */
  public static final class SummaryServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<SummaryServiceBlockingStub> {
    private SummaryServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SummaryServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SummaryServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves a summary slice covering the messages [from_seq, to_seq] of a session
     * and advances the session's summary cursor to to_seq. The slice must start
     * right after the cursor (seqs between the cursor and from_seq may only be
     * skipped when no stored message holds them) and must not end beyond the
     * newest seq of the session. A slice that overlaps the cursor, leaves
     * stored messages unsummarized, or reaches past the history is rejected with
     * FAILED_PRECONDITION whose ErrorInfo.reason says which, and whose metadata
     * carries the current cursor. Two racing calls never both advance the cursor.
     * </pre>
     */
    public dev.memoryd.v1.SaveSummaryResponse saveSummary(dev.memoryd.v1.SaveSummaryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSaveSummaryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through the summary slices of a session, oldest first (slices are
     * created in seq order, so this is also creation-time order).
     * </pre>
     */
    public dev.memoryd.v1.ListSummariesResponse listSummaries(dev.memoryd.v1.ListSummariesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSummariesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the session's summary cursor and its latest slice.
     * </pre>
     */
    public dev.memoryd.v1.GetSummaryCursorResponse getSummaryCursor(dev.memoryd.v1.GetSummaryCursorRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetSummaryCursorMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Assembles the context of a session for an LLM prompt: the latest summary,
     * the unsummarized tail after the cursor and the newest raw messages
     * (deduplicated by id), and optionally recalled memories, under a character
     * budget. Reports everything it cut and why.
     * </pre>
     */
    public dev.memoryd.v1.AssembleContextResponse assembleContext(dev.memoryd.v1.AssembleContextRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getAssembleContextMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service SummaryService.
   * <pre>
   * Summaries of message ranges with a per-session cursor, and context assembly
   * for an LLM prompt under a character budget.
   * memoryd stores and assembles; it never calls an LLM. The caller writes the
   * summary text (with its own model) and saves it here as a slice covering a
   * range of message seqs. The session's summary cursor is the last seq covered
   * by a slice: it only moves forward, so a restarted agent never summarizes the
   * same messages twice.
   * </pre>
   */
  public static final class SummaryServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<SummaryServiceFutureStub> {
    private SummaryServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SummaryServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SummaryServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves a summary slice covering the messages [from_seq, to_seq] of a session
     * and advances the session's summary cursor to to_seq. The slice must start
     * right after the cursor (seqs between the cursor and from_seq may only be
     * skipped when no stored message holds them) and must not end beyond the
     * newest seq of the session. A slice that overlaps the cursor, leaves
     * stored messages unsummarized, or reaches past the history is rejected with
     * FAILED_PRECONDITION whose ErrorInfo.reason says which, and whose metadata
     * carries the current cursor. Two racing calls never both advance the cursor.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SaveSummaryResponse> saveSummary(
        dev.memoryd.v1.SaveSummaryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSaveSummaryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Pages through the summary slices of a session, oldest first (slices are
     * created in seq order, so this is also creation-time order).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ListSummariesResponse> listSummaries(
        dev.memoryd.v1.ListSummariesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSummariesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns the session's summary cursor and its latest slice.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetSummaryCursorResponse> getSummaryCursor(
        dev.memoryd.v1.GetSummaryCursorRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetSummaryCursorMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Assembles the context of a session for an LLM prompt: the latest summary,
     * the unsummarized tail after the cursor and the newest raw messages
     * (deduplicated by id), and optionally recalled memories, under a character
     * budget. Reports everything it cut and why.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.AssembleContextResponse> assembleContext(
        dev.memoryd.v1.AssembleContextRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getAssembleContextMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SAVE_SUMMARY = 0;
  private static final int METHODID_LIST_SUMMARIES = 1;
  private static final int METHODID_GET_SUMMARY_CURSOR = 2;
  private static final int METHODID_ASSEMBLE_CONTEXT = 3;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_SAVE_SUMMARY:
          serviceImpl.saveSummary((dev.memoryd.v1.SaveSummaryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveSummaryResponse>) responseObserver);
          break;
        case METHODID_LIST_SUMMARIES:
          serviceImpl.listSummaries((dev.memoryd.v1.ListSummariesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ListSummariesResponse>) responseObserver);
          break;
        case METHODID_GET_SUMMARY_CURSOR:
          serviceImpl.getSummaryCursor((dev.memoryd.v1.GetSummaryCursorRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetSummaryCursorResponse>) responseObserver);
          break;
        case METHODID_ASSEMBLE_CONTEXT:
          serviceImpl.assembleContext((dev.memoryd.v1.AssembleContextRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.AssembleContextResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getSaveSummaryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SaveSummaryRequest,
              dev.memoryd.v1.SaveSummaryResponse>(
                service, METHODID_SAVE_SUMMARY)))
        .addMethod(
          getListSummariesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ListSummariesRequest,
              dev.memoryd.v1.ListSummariesResponse>(
                service, METHODID_LIST_SUMMARIES)))
        .addMethod(
          getGetSummaryCursorMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetSummaryCursorRequest,
              dev.memoryd.v1.GetSummaryCursorResponse>(
                service, METHODID_GET_SUMMARY_CURSOR)))
        .addMethod(
          getAssembleContextMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.AssembleContextRequest,
              dev.memoryd.v1.AssembleContextResponse>(
                service, METHODID_ASSEMBLE_CONTEXT)))
        .build();
  }

  private static abstract class SummaryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    SummaryServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.memoryd.v1.SummaryServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("SummaryService");
    }
  }

  private static final class SummaryServiceFileDescriptorSupplier
      extends SummaryServiceBaseDescriptorSupplier {
    SummaryServiceFileDescriptorSupplier() {}
  }

  private static final class SummaryServiceMethodDescriptorSupplier
      extends SummaryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    SummaryServiceMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (SummaryServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new SummaryServiceFileDescriptorSupplier())
              .addMethod(getSaveSummaryMethod())
              .addMethod(getListSummariesMethod())
              .addMethod(getGetSummaryCursorMethod())
              .addMethod(getAssembleContextMethod())
              .build();
        }
      }
    }
    return result;
  }
}
