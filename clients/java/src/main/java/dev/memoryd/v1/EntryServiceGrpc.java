package dev.memoryd.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Long-term memory entries: short facts an agent keeps across sessions and
 * restarts (the `memory_save / memory_search / memory_forget` tools).
 * Entries live in a scope (for example "g:&lt;group id&gt;" or "f:&lt;user id&gt;");
 * scopes never see each other's entries. Text is normalized (whitespace runs
 * folded to one space, ends trimmed) and an entry whose normalized text is
 * already stored in the scope is not stored twice. A scope holds at most a
 * configurable number of entries (default 200).
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class EntryServiceGrpc {

  private EntryServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "memoryd.v1.EntryService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SaveEntryRequest,
      dev.memoryd.v1.SaveEntryResponse> getSaveEntryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SaveEntry",
      requestType = dev.memoryd.v1.SaveEntryRequest.class,
      responseType = dev.memoryd.v1.SaveEntryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SaveEntryRequest,
      dev.memoryd.v1.SaveEntryResponse> getSaveEntryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SaveEntryRequest, dev.memoryd.v1.SaveEntryResponse> getSaveEntryMethod;
    if ((getSaveEntryMethod = EntryServiceGrpc.getSaveEntryMethod) == null) {
      synchronized (EntryServiceGrpc.class) {
        if ((getSaveEntryMethod = EntryServiceGrpc.getSaveEntryMethod) == null) {
          EntryServiceGrpc.getSaveEntryMethod = getSaveEntryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SaveEntryRequest, dev.memoryd.v1.SaveEntryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SaveEntry"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveEntryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveEntryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new EntryServiceMethodDescriptorSupplier("SaveEntry"))
              .build();
        }
      }
    }
    return getSaveEntryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SearchEntriesRequest,
      dev.memoryd.v1.SearchEntriesResponse> getSearchEntriesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SearchEntries",
      requestType = dev.memoryd.v1.SearchEntriesRequest.class,
      responseType = dev.memoryd.v1.SearchEntriesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SearchEntriesRequest,
      dev.memoryd.v1.SearchEntriesResponse> getSearchEntriesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SearchEntriesRequest, dev.memoryd.v1.SearchEntriesResponse> getSearchEntriesMethod;
    if ((getSearchEntriesMethod = EntryServiceGrpc.getSearchEntriesMethod) == null) {
      synchronized (EntryServiceGrpc.class) {
        if ((getSearchEntriesMethod = EntryServiceGrpc.getSearchEntriesMethod) == null) {
          EntryServiceGrpc.getSearchEntriesMethod = getSearchEntriesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SearchEntriesRequest, dev.memoryd.v1.SearchEntriesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SearchEntries"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SearchEntriesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SearchEntriesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new EntryServiceMethodDescriptorSupplier("SearchEntries"))
              .build();
        }
      }
    }
    return getSearchEntriesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ForgetEntryRequest,
      dev.memoryd.v1.ForgetEntryResponse> getForgetEntryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ForgetEntry",
      requestType = dev.memoryd.v1.ForgetEntryRequest.class,
      responseType = dev.memoryd.v1.ForgetEntryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ForgetEntryRequest,
      dev.memoryd.v1.ForgetEntryResponse> getForgetEntryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ForgetEntryRequest, dev.memoryd.v1.ForgetEntryResponse> getForgetEntryMethod;
    if ((getForgetEntryMethod = EntryServiceGrpc.getForgetEntryMethod) == null) {
      synchronized (EntryServiceGrpc.class) {
        if ((getForgetEntryMethod = EntryServiceGrpc.getForgetEntryMethod) == null) {
          EntryServiceGrpc.getForgetEntryMethod = getForgetEntryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ForgetEntryRequest, dev.memoryd.v1.ForgetEntryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ForgetEntry"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ForgetEntryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ForgetEntryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new EntryServiceMethodDescriptorSupplier("ForgetEntry"))
              .build();
        }
      }
    }
    return getForgetEntryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ListEntriesRequest,
      dev.memoryd.v1.ListEntriesResponse> getListEntriesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListEntries",
      requestType = dev.memoryd.v1.ListEntriesRequest.class,
      responseType = dev.memoryd.v1.ListEntriesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ListEntriesRequest,
      dev.memoryd.v1.ListEntriesResponse> getListEntriesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ListEntriesRequest, dev.memoryd.v1.ListEntriesResponse> getListEntriesMethod;
    if ((getListEntriesMethod = EntryServiceGrpc.getListEntriesMethod) == null) {
      synchronized (EntryServiceGrpc.class) {
        if ((getListEntriesMethod = EntryServiceGrpc.getListEntriesMethod) == null) {
          EntryServiceGrpc.getListEntriesMethod = getListEntriesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ListEntriesRequest, dev.memoryd.v1.ListEntriesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListEntries"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListEntriesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListEntriesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new EntryServiceMethodDescriptorSupplier("ListEntries"))
              .build();
        }
      }
    }
    return getListEntriesMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static EntryServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<EntryServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<EntryServiceStub>() {
        @java.lang.Override
        public EntryServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new EntryServiceStub(channel, callOptions);
        }
      };
    return EntryServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static EntryServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<EntryServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<EntryServiceBlockingV2Stub>() {
        @java.lang.Override
        public EntryServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new EntryServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return EntryServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static EntryServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<EntryServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<EntryServiceBlockingStub>() {
        @java.lang.Override
        public EntryServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new EntryServiceBlockingStub(channel, callOptions);
        }
      };
    return EntryServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static EntryServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<EntryServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<EntryServiceFutureStub>() {
        @java.lang.Override
        public EntryServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new EntryServiceFutureStub(channel, callOptions);
        }
      };
    return EntryServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Long-term memory entries: short facts an agent keeps across sessions and
   * restarts (the `memory_save / memory_search / memory_forget` tools).
   * Entries live in a scope (for example "g:&lt;group id&gt;" or "f:&lt;user id&gt;");
   * scopes never see each other's entries. Text is normalized (whitespace runs
   * folded to one space, ends trimmed) and an entry whose normalized text is
   * already stored in the scope is not stored twice. A scope holds at most a
   * configurable number of entries (default 200).
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Saves an entry. A duplicate of a stored entry returns the stored one with
     * `deduplicated` set. A full scope answers FAILED_PRECONDITION with
     * ErrorInfo.reason ENTRY_SCOPE_FULL (forget or merge entries first).
     * </pre>
     */
    default void saveEntry(dev.memoryd.v1.SaveEntryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveEntryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSaveEntryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Searches a scope by keyword (tag hits weigh more than content hits) and,
     * when the entries and the query have vectors of the same model,
     * semantically. Without a query, returns the newest entries.
     * </pre>
     */
    default void searchEntries(dev.memoryd.v1.SearchEntriesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SearchEntriesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSearchEntriesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Forgets (deletes) one entry.
     * </pre>
     */
    default void forgetEntry(dev.memoryd.v1.ForgetEntryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ForgetEntryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getForgetEntryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Pages through the entries of a scope, newest first.
     * </pre>
     */
    default void listEntries(dev.memoryd.v1.ListEntriesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListEntriesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListEntriesMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service EntryService.
   * <pre>
   * Long-term memory entries: short facts an agent keeps across sessions and
   * restarts (the `memory_save / memory_search / memory_forget` tools).
   * Entries live in a scope (for example "g:&lt;group id&gt;" or "f:&lt;user id&gt;");
   * scopes never see each other's entries. Text is normalized (whitespace runs
   * folded to one space, ends trimmed) and an entry whose normalized text is
   * already stored in the scope is not stored twice. A scope holds at most a
   * configurable number of entries (default 200).
   * </pre>
   */
  public static abstract class EntryServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return EntryServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service EntryService.
   * <pre>
   * Long-term memory entries: short facts an agent keeps across sessions and
   * restarts (the `memory_save / memory_search / memory_forget` tools).
   * Entries live in a scope (for example "g:&lt;group id&gt;" or "f:&lt;user id&gt;");
   * scopes never see each other's entries. Text is normalized (whitespace runs
   * folded to one space, ends trimmed) and an entry whose normalized text is
   * already stored in the scope is not stored twice. A scope holds at most a
   * configurable number of entries (default 200).
   * </pre>
   */
  public static final class EntryServiceStub
      extends io.grpc.stub.AbstractAsyncStub<EntryServiceStub> {
    private EntryServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected EntryServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new EntryServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves an entry. A duplicate of a stored entry returns the stored one with
     * `deduplicated` set. A full scope answers FAILED_PRECONDITION with
     * ErrorInfo.reason ENTRY_SCOPE_FULL (forget or merge entries first).
     * </pre>
     */
    public void saveEntry(dev.memoryd.v1.SaveEntryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveEntryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSaveEntryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Searches a scope by keyword (tag hits weigh more than content hits) and,
     * when the entries and the query have vectors of the same model,
     * semantically. Without a query, returns the newest entries.
     * </pre>
     */
    public void searchEntries(dev.memoryd.v1.SearchEntriesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SearchEntriesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSearchEntriesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Forgets (deletes) one entry.
     * </pre>
     */
    public void forgetEntry(dev.memoryd.v1.ForgetEntryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ForgetEntryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getForgetEntryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Pages through the entries of a scope, newest first.
     * </pre>
     */
    public void listEntries(dev.memoryd.v1.ListEntriesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListEntriesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListEntriesMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service EntryService.
   * <pre>
   * Long-term memory entries: short facts an agent keeps across sessions and
   * restarts (the `memory_save / memory_search / memory_forget` tools).
   * Entries live in a scope (for example "g:&lt;group id&gt;" or "f:&lt;user id&gt;");
   * scopes never see each other's entries. Text is normalized (whitespace runs
   * folded to one space, ends trimmed) and an entry whose normalized text is
   * already stored in the scope is not stored twice. A scope holds at most a
   * configurable number of entries (default 200).
   * </pre>
   */
  public static final class EntryServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<EntryServiceBlockingV2Stub> {
    private EntryServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected EntryServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new EntryServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves an entry. A duplicate of a stored entry returns the stored one with
     * `deduplicated` set. A full scope answers FAILED_PRECONDITION with
     * ErrorInfo.reason ENTRY_SCOPE_FULL (forget or merge entries first).
     * </pre>
     */
    public dev.memoryd.v1.SaveEntryResponse saveEntry(dev.memoryd.v1.SaveEntryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSaveEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Searches a scope by keyword (tag hits weigh more than content hits) and,
     * when the entries and the query have vectors of the same model,
     * semantically. Without a query, returns the newest entries.
     * </pre>
     */
    public dev.memoryd.v1.SearchEntriesResponse searchEntries(dev.memoryd.v1.SearchEntriesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSearchEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Forgets (deletes) one entry.
     * </pre>
     */
    public dev.memoryd.v1.ForgetEntryResponse forgetEntry(dev.memoryd.v1.ForgetEntryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getForgetEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through the entries of a scope, newest first.
     * </pre>
     */
    public dev.memoryd.v1.ListEntriesResponse listEntries(dev.memoryd.v1.ListEntriesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListEntriesMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service EntryService.
   * <pre>
   * Long-term memory entries: short facts an agent keeps across sessions and
   * restarts (the `memory_save / memory_search / memory_forget` tools).
   * Entries live in a scope (for example "g:&lt;group id&gt;" or "f:&lt;user id&gt;");
   * scopes never see each other's entries. Text is normalized (whitespace runs
   * folded to one space, ends trimmed) and an entry whose normalized text is
   * already stored in the scope is not stored twice. A scope holds at most a
   * configurable number of entries (default 200).
   * </pre>
   */
  public static final class EntryServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<EntryServiceBlockingStub> {
    private EntryServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected EntryServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new EntryServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves an entry. A duplicate of a stored entry returns the stored one with
     * `deduplicated` set. A full scope answers FAILED_PRECONDITION with
     * ErrorInfo.reason ENTRY_SCOPE_FULL (forget or merge entries first).
     * </pre>
     */
    public dev.memoryd.v1.SaveEntryResponse saveEntry(dev.memoryd.v1.SaveEntryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSaveEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Searches a scope by keyword (tag hits weigh more than content hits) and,
     * when the entries and the query have vectors of the same model,
     * semantically. Without a query, returns the newest entries.
     * </pre>
     */
    public dev.memoryd.v1.SearchEntriesResponse searchEntries(dev.memoryd.v1.SearchEntriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSearchEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Forgets (deletes) one entry.
     * </pre>
     */
    public dev.memoryd.v1.ForgetEntryResponse forgetEntry(dev.memoryd.v1.ForgetEntryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getForgetEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through the entries of a scope, newest first.
     * </pre>
     */
    public dev.memoryd.v1.ListEntriesResponse listEntries(dev.memoryd.v1.ListEntriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListEntriesMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service EntryService.
   * <pre>
   * Long-term memory entries: short facts an agent keeps across sessions and
   * restarts (the `memory_save / memory_search / memory_forget` tools).
   * Entries live in a scope (for example "g:&lt;group id&gt;" or "f:&lt;user id&gt;");
   * scopes never see each other's entries. Text is normalized (whitespace runs
   * folded to one space, ends trimmed) and an entry whose normalized text is
   * already stored in the scope is not stored twice. A scope holds at most a
   * configurable number of entries (default 200).
   * </pre>
   */
  public static final class EntryServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<EntryServiceFutureStub> {
    private EntryServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected EntryServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new EntryServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves an entry. A duplicate of a stored entry returns the stored one with
     * `deduplicated` set. A full scope answers FAILED_PRECONDITION with
     * ErrorInfo.reason ENTRY_SCOPE_FULL (forget or merge entries first).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SaveEntryResponse> saveEntry(
        dev.memoryd.v1.SaveEntryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSaveEntryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Searches a scope by keyword (tag hits weigh more than content hits) and,
     * when the entries and the query have vectors of the same model,
     * semantically. Without a query, returns the newest entries.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SearchEntriesResponse> searchEntries(
        dev.memoryd.v1.SearchEntriesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSearchEntriesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Forgets (deletes) one entry.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ForgetEntryResponse> forgetEntry(
        dev.memoryd.v1.ForgetEntryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getForgetEntryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Pages through the entries of a scope, newest first.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ListEntriesResponse> listEntries(
        dev.memoryd.v1.ListEntriesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListEntriesMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SAVE_ENTRY = 0;
  private static final int METHODID_SEARCH_ENTRIES = 1;
  private static final int METHODID_FORGET_ENTRY = 2;
  private static final int METHODID_LIST_ENTRIES = 3;

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
        case METHODID_SAVE_ENTRY:
          serviceImpl.saveEntry((dev.memoryd.v1.SaveEntryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveEntryResponse>) responseObserver);
          break;
        case METHODID_SEARCH_ENTRIES:
          serviceImpl.searchEntries((dev.memoryd.v1.SearchEntriesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SearchEntriesResponse>) responseObserver);
          break;
        case METHODID_FORGET_ENTRY:
          serviceImpl.forgetEntry((dev.memoryd.v1.ForgetEntryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ForgetEntryResponse>) responseObserver);
          break;
        case METHODID_LIST_ENTRIES:
          serviceImpl.listEntries((dev.memoryd.v1.ListEntriesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ListEntriesResponse>) responseObserver);
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
          getSaveEntryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SaveEntryRequest,
              dev.memoryd.v1.SaveEntryResponse>(
                service, METHODID_SAVE_ENTRY)))
        .addMethod(
          getSearchEntriesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SearchEntriesRequest,
              dev.memoryd.v1.SearchEntriesResponse>(
                service, METHODID_SEARCH_ENTRIES)))
        .addMethod(
          getForgetEntryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ForgetEntryRequest,
              dev.memoryd.v1.ForgetEntryResponse>(
                service, METHODID_FORGET_ENTRY)))
        .addMethod(
          getListEntriesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ListEntriesRequest,
              dev.memoryd.v1.ListEntriesResponse>(
                service, METHODID_LIST_ENTRIES)))
        .build();
  }

  private static abstract class EntryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    EntryServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.memoryd.v1.EntryServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("EntryService");
    }
  }

  private static final class EntryServiceFileDescriptorSupplier
      extends EntryServiceBaseDescriptorSupplier {
    EntryServiceFileDescriptorSupplier() {}
  }

  private static final class EntryServiceMethodDescriptorSupplier
      extends EntryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    EntryServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (EntryServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new EntryServiceFileDescriptorSupplier())
              .addMethod(getSaveEntryMethod())
              .addMethod(getSearchEntriesMethod())
              .addMethod(getForgetEntryMethod())
              .addMethod(getListEntriesMethod())
              .build();
        }
      }
    }
    return result;
  }
}
