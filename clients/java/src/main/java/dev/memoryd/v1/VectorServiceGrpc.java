package dev.memoryd.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Semantic memory: message embeddings in Qdrant and recall over them.
 * Vectors live in an embedding space named by `model_id` (for example
 * "openai:text-embedding-3-small"). Vectors of different models are never
 * compared, and vectors of different dimensions never share a collection.
 * Every point belongs to the caller's tenant.
 * Every RPC validates its input before touching storage: invalid input gets
 * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field, and nothing
 * is stored from a rejected request.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class VectorServiceGrpc {

  private VectorServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "memoryd.v1.VectorService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.UpsertVectorsRequest,
      dev.memoryd.v1.UpsertVectorsResponse> getUpsertVectorsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpsertVectors",
      requestType = dev.memoryd.v1.UpsertVectorsRequest.class,
      responseType = dev.memoryd.v1.UpsertVectorsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.UpsertVectorsRequest,
      dev.memoryd.v1.UpsertVectorsResponse> getUpsertVectorsMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.UpsertVectorsRequest, dev.memoryd.v1.UpsertVectorsResponse> getUpsertVectorsMethod;
    if ((getUpsertVectorsMethod = VectorServiceGrpc.getUpsertVectorsMethod) == null) {
      synchronized (VectorServiceGrpc.class) {
        if ((getUpsertVectorsMethod = VectorServiceGrpc.getUpsertVectorsMethod) == null) {
          VectorServiceGrpc.getUpsertVectorsMethod = getUpsertVectorsMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.UpsertVectorsRequest, dev.memoryd.v1.UpsertVectorsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpsertVectors"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.UpsertVectorsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.UpsertVectorsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new VectorServiceMethodDescriptorSupplier("UpsertVectors"))
              .build();
        }
      }
    }
    return getUpsertVectorsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SearchMemoryRequest,
      dev.memoryd.v1.SearchMemoryResponse> getSearchMemoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SearchMemory",
      requestType = dev.memoryd.v1.SearchMemoryRequest.class,
      responseType = dev.memoryd.v1.SearchMemoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SearchMemoryRequest,
      dev.memoryd.v1.SearchMemoryResponse> getSearchMemoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SearchMemoryRequest, dev.memoryd.v1.SearchMemoryResponse> getSearchMemoryMethod;
    if ((getSearchMemoryMethod = VectorServiceGrpc.getSearchMemoryMethod) == null) {
      synchronized (VectorServiceGrpc.class) {
        if ((getSearchMemoryMethod = VectorServiceGrpc.getSearchMemoryMethod) == null) {
          VectorServiceGrpc.getSearchMemoryMethod = getSearchMemoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SearchMemoryRequest, dev.memoryd.v1.SearchMemoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SearchMemory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SearchMemoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SearchMemoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new VectorServiceMethodDescriptorSupplier("SearchMemory"))
              .build();
        }
      }
    }
    return getSearchMemoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteVectorsRequest,
      dev.memoryd.v1.DeleteVectorsResponse> getDeleteVectorsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteVectors",
      requestType = dev.memoryd.v1.DeleteVectorsRequest.class,
      responseType = dev.memoryd.v1.DeleteVectorsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteVectorsRequest,
      dev.memoryd.v1.DeleteVectorsResponse> getDeleteVectorsMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteVectorsRequest, dev.memoryd.v1.DeleteVectorsResponse> getDeleteVectorsMethod;
    if ((getDeleteVectorsMethod = VectorServiceGrpc.getDeleteVectorsMethod) == null) {
      synchronized (VectorServiceGrpc.class) {
        if ((getDeleteVectorsMethod = VectorServiceGrpc.getDeleteVectorsMethod) == null) {
          VectorServiceGrpc.getDeleteVectorsMethod = getDeleteVectorsMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.DeleteVectorsRequest, dev.memoryd.v1.DeleteVectorsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteVectors"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteVectorsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteVectorsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new VectorServiceMethodDescriptorSupplier("DeleteVectors"))
              .build();
        }
      }
    }
    return getDeleteVectorsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetVectorStatsRequest,
      dev.memoryd.v1.GetVectorStatsResponse> getGetVectorStatsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetVectorStats",
      requestType = dev.memoryd.v1.GetVectorStatsRequest.class,
      responseType = dev.memoryd.v1.GetVectorStatsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetVectorStatsRequest,
      dev.memoryd.v1.GetVectorStatsResponse> getGetVectorStatsMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetVectorStatsRequest, dev.memoryd.v1.GetVectorStatsResponse> getGetVectorStatsMethod;
    if ((getGetVectorStatsMethod = VectorServiceGrpc.getGetVectorStatsMethod) == null) {
      synchronized (VectorServiceGrpc.class) {
        if ((getGetVectorStatsMethod = VectorServiceGrpc.getGetVectorStatsMethod) == null) {
          VectorServiceGrpc.getGetVectorStatsMethod = getGetVectorStatsMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetVectorStatsRequest, dev.memoryd.v1.GetVectorStatsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetVectorStats"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetVectorStatsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetVectorStatsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new VectorServiceMethodDescriptorSupplier("GetVectorStats"))
              .build();
        }
      }
    }
    return getGetVectorStatsMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static VectorServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<VectorServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<VectorServiceStub>() {
        @java.lang.Override
        public VectorServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new VectorServiceStub(channel, callOptions);
        }
      };
    return VectorServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static VectorServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<VectorServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<VectorServiceBlockingV2Stub>() {
        @java.lang.Override
        public VectorServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new VectorServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return VectorServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static VectorServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<VectorServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<VectorServiceBlockingStub>() {
        @java.lang.Override
        public VectorServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new VectorServiceBlockingStub(channel, callOptions);
        }
      };
    return VectorServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static VectorServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<VectorServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<VectorServiceFutureStub>() {
        @java.lang.Override
        public VectorServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new VectorServiceFutureStub(channel, callOptions);
        }
      };
    return VectorServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Semantic memory: message embeddings in Qdrant and recall over them.
   * Vectors live in an embedding space named by `model_id` (for example
   * "openai:text-embedding-3-small"). Vectors of different models are never
   * compared, and vectors of different dimensions never share a collection.
   * Every point belongs to the caller's tenant.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field, and nothing
   * is stored from a rejected request.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Stores caller-supplied vectors. A point is identified by (session,
     * message id or timestamp, model), so indexing the same message again
     * replaces its point instead of adding one.
     * </pre>
     */
    default void upsertVectors(dev.memoryd.v1.UpsertVectorsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.UpsertVectorsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpsertVectorsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Recalls the messages most similar to a query vector (or a query text when
     * the server has an embedder), reranked by recency, each with the messages
     * around it in its session.
     * </pre>
     */
    default void searchMemory(dev.memoryd.v1.SearchMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SearchMemoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSearchMemoryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes vectors by session, by (session, timestamps), by model, or all of
     * the caller's vectors.
     * </pre>
     */
    default void deleteVectors(dev.memoryd.v1.DeleteVectorsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteVectorsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteVectorsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Counts the caller's vectors per model and per collection, and reports the
     * background indexer's queue.
     * </pre>
     */
    default void getVectorStats(dev.memoryd.v1.GetVectorStatsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetVectorStatsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetVectorStatsMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service VectorService.
   * <pre>
   * Semantic memory: message embeddings in Qdrant and recall over them.
   * Vectors live in an embedding space named by `model_id` (for example
   * "openai:text-embedding-3-small"). Vectors of different models are never
   * compared, and vectors of different dimensions never share a collection.
   * Every point belongs to the caller's tenant.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field, and nothing
   * is stored from a rejected request.
   * </pre>
   */
  public static abstract class VectorServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return VectorServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service VectorService.
   * <pre>
   * Semantic memory: message embeddings in Qdrant and recall over them.
   * Vectors live in an embedding space named by `model_id` (for example
   * "openai:text-embedding-3-small"). Vectors of different models are never
   * compared, and vectors of different dimensions never share a collection.
   * Every point belongs to the caller's tenant.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field, and nothing
   * is stored from a rejected request.
   * </pre>
   */
  public static final class VectorServiceStub
      extends io.grpc.stub.AbstractAsyncStub<VectorServiceStub> {
    private VectorServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected VectorServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new VectorServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Stores caller-supplied vectors. A point is identified by (session,
     * message id or timestamp, model), so indexing the same message again
     * replaces its point instead of adding one.
     * </pre>
     */
    public void upsertVectors(dev.memoryd.v1.UpsertVectorsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.UpsertVectorsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpsertVectorsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Recalls the messages most similar to a query vector (or a query text when
     * the server has an embedder), reranked by recency, each with the messages
     * around it in its session.
     * </pre>
     */
    public void searchMemory(dev.memoryd.v1.SearchMemoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SearchMemoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSearchMemoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes vectors by session, by (session, timestamps), by model, or all of
     * the caller's vectors.
     * </pre>
     */
    public void deleteVectors(dev.memoryd.v1.DeleteVectorsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteVectorsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteVectorsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Counts the caller's vectors per model and per collection, and reports the
     * background indexer's queue.
     * </pre>
     */
    public void getVectorStats(dev.memoryd.v1.GetVectorStatsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetVectorStatsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetVectorStatsMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service VectorService.
   * <pre>
   * Semantic memory: message embeddings in Qdrant and recall over them.
   * Vectors live in an embedding space named by `model_id` (for example
   * "openai:text-embedding-3-small"). Vectors of different models are never
   * compared, and vectors of different dimensions never share a collection.
   * Every point belongs to the caller's tenant.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field, and nothing
   * is stored from a rejected request.
   * </pre>
   */
  public static final class VectorServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<VectorServiceBlockingV2Stub> {
    private VectorServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected VectorServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new VectorServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Stores caller-supplied vectors. A point is identified by (session,
     * message id or timestamp, model), so indexing the same message again
     * replaces its point instead of adding one.
     * </pre>
     */
    public dev.memoryd.v1.UpsertVectorsResponse upsertVectors(dev.memoryd.v1.UpsertVectorsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUpsertVectorsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Recalls the messages most similar to a query vector (or a query text when
     * the server has an embedder), reranked by recency, each with the messages
     * around it in its session.
     * </pre>
     */
    public dev.memoryd.v1.SearchMemoryResponse searchMemory(dev.memoryd.v1.SearchMemoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSearchMemoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes vectors by session, by (session, timestamps), by model, or all of
     * the caller's vectors.
     * </pre>
     */
    public dev.memoryd.v1.DeleteVectorsResponse deleteVectors(dev.memoryd.v1.DeleteVectorsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteVectorsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Counts the caller's vectors per model and per collection, and reports the
     * background indexer's queue.
     * </pre>
     */
    public dev.memoryd.v1.GetVectorStatsResponse getVectorStats(dev.memoryd.v1.GetVectorStatsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetVectorStatsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service VectorService.
   * <pre>
   * Semantic memory: message embeddings in Qdrant and recall over them.
   * Vectors live in an embedding space named by `model_id` (for example
   * "openai:text-embedding-3-small"). Vectors of different models are never
   * compared, and vectors of different dimensions never share a collection.
   * Every point belongs to the caller's tenant.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field, and nothing
   * is stored from a rejected request.
   * </pre>
   */
  public static final class VectorServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<VectorServiceBlockingStub> {
    private VectorServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected VectorServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new VectorServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Stores caller-supplied vectors. A point is identified by (session,
     * message id or timestamp, model), so indexing the same message again
     * replaces its point instead of adding one.
     * </pre>
     */
    public dev.memoryd.v1.UpsertVectorsResponse upsertVectors(dev.memoryd.v1.UpsertVectorsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpsertVectorsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Recalls the messages most similar to a query vector (or a query text when
     * the server has an embedder), reranked by recency, each with the messages
     * around it in its session.
     * </pre>
     */
    public dev.memoryd.v1.SearchMemoryResponse searchMemory(dev.memoryd.v1.SearchMemoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSearchMemoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes vectors by session, by (session, timestamps), by model, or all of
     * the caller's vectors.
     * </pre>
     */
    public dev.memoryd.v1.DeleteVectorsResponse deleteVectors(dev.memoryd.v1.DeleteVectorsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteVectorsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Counts the caller's vectors per model and per collection, and reports the
     * background indexer's queue.
     * </pre>
     */
    public dev.memoryd.v1.GetVectorStatsResponse getVectorStats(dev.memoryd.v1.GetVectorStatsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetVectorStatsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service VectorService.
   * <pre>
   * Semantic memory: message embeddings in Qdrant and recall over them.
   * Vectors live in an embedding space named by `model_id` (for example
   * "openai:text-embedding-3-small"). Vectors of different models are never
   * compared, and vectors of different dimensions never share a collection.
   * Every point belongs to the caller's tenant.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field, and nothing
   * is stored from a rejected request.
   * </pre>
   */
  public static final class VectorServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<VectorServiceFutureStub> {
    private VectorServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected VectorServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new VectorServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Stores caller-supplied vectors. A point is identified by (session,
     * message id or timestamp, model), so indexing the same message again
     * replaces its point instead of adding one.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.UpsertVectorsResponse> upsertVectors(
        dev.memoryd.v1.UpsertVectorsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpsertVectorsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Recalls the messages most similar to a query vector (or a query text when
     * the server has an embedder), reranked by recency, each with the messages
     * around it in its session.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SearchMemoryResponse> searchMemory(
        dev.memoryd.v1.SearchMemoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSearchMemoryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes vectors by session, by (session, timestamps), by model, or all of
     * the caller's vectors.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.DeleteVectorsResponse> deleteVectors(
        dev.memoryd.v1.DeleteVectorsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteVectorsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Counts the caller's vectors per model and per collection, and reports the
     * background indexer's queue.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetVectorStatsResponse> getVectorStats(
        dev.memoryd.v1.GetVectorStatsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetVectorStatsMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_UPSERT_VECTORS = 0;
  private static final int METHODID_SEARCH_MEMORY = 1;
  private static final int METHODID_DELETE_VECTORS = 2;
  private static final int METHODID_GET_VECTOR_STATS = 3;

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
        case METHODID_UPSERT_VECTORS:
          serviceImpl.upsertVectors((dev.memoryd.v1.UpsertVectorsRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.UpsertVectorsResponse>) responseObserver);
          break;
        case METHODID_SEARCH_MEMORY:
          serviceImpl.searchMemory((dev.memoryd.v1.SearchMemoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SearchMemoryResponse>) responseObserver);
          break;
        case METHODID_DELETE_VECTORS:
          serviceImpl.deleteVectors((dev.memoryd.v1.DeleteVectorsRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteVectorsResponse>) responseObserver);
          break;
        case METHODID_GET_VECTOR_STATS:
          serviceImpl.getVectorStats((dev.memoryd.v1.GetVectorStatsRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetVectorStatsResponse>) responseObserver);
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
          getUpsertVectorsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.UpsertVectorsRequest,
              dev.memoryd.v1.UpsertVectorsResponse>(
                service, METHODID_UPSERT_VECTORS)))
        .addMethod(
          getSearchMemoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SearchMemoryRequest,
              dev.memoryd.v1.SearchMemoryResponse>(
                service, METHODID_SEARCH_MEMORY)))
        .addMethod(
          getDeleteVectorsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.DeleteVectorsRequest,
              dev.memoryd.v1.DeleteVectorsResponse>(
                service, METHODID_DELETE_VECTORS)))
        .addMethod(
          getGetVectorStatsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetVectorStatsRequest,
              dev.memoryd.v1.GetVectorStatsResponse>(
                service, METHODID_GET_VECTOR_STATS)))
        .build();
  }

  private static abstract class VectorServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    VectorServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.memoryd.v1.VectorServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("VectorService");
    }
  }

  private static final class VectorServiceFileDescriptorSupplier
      extends VectorServiceBaseDescriptorSupplier {
    VectorServiceFileDescriptorSupplier() {}
  }

  private static final class VectorServiceMethodDescriptorSupplier
      extends VectorServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    VectorServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (VectorServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new VectorServiceFileDescriptorSupplier())
              .addMethod(getUpsertVectorsMethod())
              .addMethod(getSearchMemoryMethod())
              .addMethod(getDeleteVectorsMethod())
              .addMethod(getGetVectorStatsMethod())
              .build();
        }
      }
    }
    return result;
  }
}
