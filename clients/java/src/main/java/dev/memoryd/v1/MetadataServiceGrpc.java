package dev.memoryd.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Small structured side records (summaries, profiles, cursors), unique per
 * (namespace, key). Namespaces isolate from each other.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class MetadataServiceGrpc {

  private MetadataServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "memoryd.v1.MetadataService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SaveMetadataRequest,
      dev.memoryd.v1.SaveMetadataResponse> getSaveMetadataMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SaveMetadata",
      requestType = dev.memoryd.v1.SaveMetadataRequest.class,
      responseType = dev.memoryd.v1.SaveMetadataResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SaveMetadataRequest,
      dev.memoryd.v1.SaveMetadataResponse> getSaveMetadataMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SaveMetadataRequest, dev.memoryd.v1.SaveMetadataResponse> getSaveMetadataMethod;
    if ((getSaveMetadataMethod = MetadataServiceGrpc.getSaveMetadataMethod) == null) {
      synchronized (MetadataServiceGrpc.class) {
        if ((getSaveMetadataMethod = MetadataServiceGrpc.getSaveMetadataMethod) == null) {
          MetadataServiceGrpc.getSaveMetadataMethod = getSaveMetadataMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SaveMetadataRequest, dev.memoryd.v1.SaveMetadataResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SaveMetadata"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveMetadataRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveMetadataResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MetadataServiceMethodDescriptorSupplier("SaveMetadata"))
              .build();
        }
      }
    }
    return getSaveMetadataMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetMetadataRequest,
      dev.memoryd.v1.GetMetadataResponse> getGetMetadataMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetMetadata",
      requestType = dev.memoryd.v1.GetMetadataRequest.class,
      responseType = dev.memoryd.v1.GetMetadataResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetMetadataRequest,
      dev.memoryd.v1.GetMetadataResponse> getGetMetadataMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetMetadataRequest, dev.memoryd.v1.GetMetadataResponse> getGetMetadataMethod;
    if ((getGetMetadataMethod = MetadataServiceGrpc.getGetMetadataMethod) == null) {
      synchronized (MetadataServiceGrpc.class) {
        if ((getGetMetadataMethod = MetadataServiceGrpc.getGetMetadataMethod) == null) {
          MetadataServiceGrpc.getGetMetadataMethod = getGetMetadataMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetMetadataRequest, dev.memoryd.v1.GetMetadataResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetMetadata"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetMetadataRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetMetadataResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MetadataServiceMethodDescriptorSupplier("GetMetadata"))
              .build();
        }
      }
    }
    return getGetMetadataMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ListMetadataRequest,
      dev.memoryd.v1.ListMetadataResponse> getListMetadataMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListMetadata",
      requestType = dev.memoryd.v1.ListMetadataRequest.class,
      responseType = dev.memoryd.v1.ListMetadataResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ListMetadataRequest,
      dev.memoryd.v1.ListMetadataResponse> getListMetadataMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ListMetadataRequest, dev.memoryd.v1.ListMetadataResponse> getListMetadataMethod;
    if ((getListMetadataMethod = MetadataServiceGrpc.getListMetadataMethod) == null) {
      synchronized (MetadataServiceGrpc.class) {
        if ((getListMetadataMethod = MetadataServiceGrpc.getListMetadataMethod) == null) {
          MetadataServiceGrpc.getListMetadataMethod = getListMetadataMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ListMetadataRequest, dev.memoryd.v1.ListMetadataResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListMetadata"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListMetadataRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListMetadataResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MetadataServiceMethodDescriptorSupplier("ListMetadata"))
              .build();
        }
      }
    }
    return getListMetadataMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMetadataRequest,
      dev.memoryd.v1.DeleteMetadataResponse> getDeleteMetadataMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteMetadata",
      requestType = dev.memoryd.v1.DeleteMetadataRequest.class,
      responseType = dev.memoryd.v1.DeleteMetadataResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMetadataRequest,
      dev.memoryd.v1.DeleteMetadataResponse> getDeleteMetadataMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMetadataRequest, dev.memoryd.v1.DeleteMetadataResponse> getDeleteMetadataMethod;
    if ((getDeleteMetadataMethod = MetadataServiceGrpc.getDeleteMetadataMethod) == null) {
      synchronized (MetadataServiceGrpc.class) {
        if ((getDeleteMetadataMethod = MetadataServiceGrpc.getDeleteMetadataMethod) == null) {
          MetadataServiceGrpc.getDeleteMetadataMethod = getDeleteMetadataMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.DeleteMetadataRequest, dev.memoryd.v1.DeleteMetadataResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteMetadata"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteMetadataRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteMetadataResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MetadataServiceMethodDescriptorSupplier("DeleteMetadata"))
              .build();
        }
      }
    }
    return getDeleteMetadataMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static MetadataServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MetadataServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MetadataServiceStub>() {
        @java.lang.Override
        public MetadataServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MetadataServiceStub(channel, callOptions);
        }
      };
    return MetadataServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static MetadataServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MetadataServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MetadataServiceBlockingV2Stub>() {
        @java.lang.Override
        public MetadataServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MetadataServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return MetadataServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static MetadataServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MetadataServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MetadataServiceBlockingStub>() {
        @java.lang.Override
        public MetadataServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MetadataServiceBlockingStub(channel, callOptions);
        }
      };
    return MetadataServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static MetadataServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MetadataServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MetadataServiceFutureStub>() {
        @java.lang.Override
        public MetadataServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MetadataServiceFutureStub(channel, callOptions);
        }
      };
    return MetadataServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Small structured side records (summaries, profiles, cursors), unique per
   * (namespace, key). Namespaces isolate from each other.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Creates or replaces the record at (namespace, key).
     * </pre>
     */
    default void saveMetadata(dev.memoryd.v1.SaveMetadataRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveMetadataResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSaveMetadataMethod(), responseObserver);
    }

    /**
     * <pre>
     * Reads one record. Absence is a normal answer (`found` = false), not an error.
     * </pre>
     */
    default void getMetadata(dev.memoryd.v1.GetMetadataRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetMetadataResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetMetadataMethod(), responseObserver);
    }

    /**
     * <pre>
     * Pages through the records of one namespace, ordered by key.
     * </pre>
     */
    default void listMetadata(dev.memoryd.v1.ListMetadataRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListMetadataResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListMetadataMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes one record.
     * </pre>
     */
    default void deleteMetadata(dev.memoryd.v1.DeleteMetadataRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMetadataResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteMetadataMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service MetadataService.
   * <pre>
   * Small structured side records (summaries, profiles, cursors), unique per
   * (namespace, key). Namespaces isolate from each other.
   * </pre>
   */
  public static abstract class MetadataServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return MetadataServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service MetadataService.
   * <pre>
   * Small structured side records (summaries, profiles, cursors), unique per
   * (namespace, key). Namespaces isolate from each other.
   * </pre>
   */
  public static final class MetadataServiceStub
      extends io.grpc.stub.AbstractAsyncStub<MetadataServiceStub> {
    private MetadataServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MetadataServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MetadataServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Creates or replaces the record at (namespace, key).
     * </pre>
     */
    public void saveMetadata(dev.memoryd.v1.SaveMetadataRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveMetadataResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSaveMetadataMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Reads one record. Absence is a normal answer (`found` = false), not an error.
     * </pre>
     */
    public void getMetadata(dev.memoryd.v1.GetMetadataRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetMetadataResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetMetadataMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Pages through the records of one namespace, ordered by key.
     * </pre>
     */
    public void listMetadata(dev.memoryd.v1.ListMetadataRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListMetadataResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListMetadataMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes one record.
     * </pre>
     */
    public void deleteMetadata(dev.memoryd.v1.DeleteMetadataRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMetadataResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteMetadataMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service MetadataService.
   * <pre>
   * Small structured side records (summaries, profiles, cursors), unique per
   * (namespace, key). Namespaces isolate from each other.
   * </pre>
   */
  public static final class MetadataServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<MetadataServiceBlockingV2Stub> {
    private MetadataServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MetadataServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MetadataServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Creates or replaces the record at (namespace, key).
     * </pre>
     */
    public dev.memoryd.v1.SaveMetadataResponse saveMetadata(dev.memoryd.v1.SaveMetadataRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSaveMetadataMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Reads one record. Absence is a normal answer (`found` = false), not an error.
     * </pre>
     */
    public dev.memoryd.v1.GetMetadataResponse getMetadata(dev.memoryd.v1.GetMetadataRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetMetadataMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through the records of one namespace, ordered by key.
     * </pre>
     */
    public dev.memoryd.v1.ListMetadataResponse listMetadata(dev.memoryd.v1.ListMetadataRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListMetadataMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes one record.
     * </pre>
     */
    public dev.memoryd.v1.DeleteMetadataResponse deleteMetadata(dev.memoryd.v1.DeleteMetadataRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteMetadataMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service MetadataService.
   * <pre>
   * Small structured side records (summaries, profiles, cursors), unique per
   * (namespace, key). Namespaces isolate from each other.
   * </pre>
   */
  public static final class MetadataServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<MetadataServiceBlockingStub> {
    private MetadataServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MetadataServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MetadataServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Creates or replaces the record at (namespace, key).
     * </pre>
     */
    public dev.memoryd.v1.SaveMetadataResponse saveMetadata(dev.memoryd.v1.SaveMetadataRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSaveMetadataMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Reads one record. Absence is a normal answer (`found` = false), not an error.
     * </pre>
     */
    public dev.memoryd.v1.GetMetadataResponse getMetadata(dev.memoryd.v1.GetMetadataRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetMetadataMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through the records of one namespace, ordered by key.
     * </pre>
     */
    public dev.memoryd.v1.ListMetadataResponse listMetadata(dev.memoryd.v1.ListMetadataRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListMetadataMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes one record.
     * </pre>
     */
    public dev.memoryd.v1.DeleteMetadataResponse deleteMetadata(dev.memoryd.v1.DeleteMetadataRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteMetadataMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service MetadataService.
   * <pre>
   * Small structured side records (summaries, profiles, cursors), unique per
   * (namespace, key). Namespaces isolate from each other.
   * </pre>
   */
  public static final class MetadataServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<MetadataServiceFutureStub> {
    private MetadataServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MetadataServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MetadataServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Creates or replaces the record at (namespace, key).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SaveMetadataResponse> saveMetadata(
        dev.memoryd.v1.SaveMetadataRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSaveMetadataMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Reads one record. Absence is a normal answer (`found` = false), not an error.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetMetadataResponse> getMetadata(
        dev.memoryd.v1.GetMetadataRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetMetadataMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Pages through the records of one namespace, ordered by key.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ListMetadataResponse> listMetadata(
        dev.memoryd.v1.ListMetadataRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListMetadataMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes one record.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.DeleteMetadataResponse> deleteMetadata(
        dev.memoryd.v1.DeleteMetadataRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteMetadataMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SAVE_METADATA = 0;
  private static final int METHODID_GET_METADATA = 1;
  private static final int METHODID_LIST_METADATA = 2;
  private static final int METHODID_DELETE_METADATA = 3;

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
        case METHODID_SAVE_METADATA:
          serviceImpl.saveMetadata((dev.memoryd.v1.SaveMetadataRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveMetadataResponse>) responseObserver);
          break;
        case METHODID_GET_METADATA:
          serviceImpl.getMetadata((dev.memoryd.v1.GetMetadataRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetMetadataResponse>) responseObserver);
          break;
        case METHODID_LIST_METADATA:
          serviceImpl.listMetadata((dev.memoryd.v1.ListMetadataRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ListMetadataResponse>) responseObserver);
          break;
        case METHODID_DELETE_METADATA:
          serviceImpl.deleteMetadata((dev.memoryd.v1.DeleteMetadataRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMetadataResponse>) responseObserver);
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
          getSaveMetadataMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SaveMetadataRequest,
              dev.memoryd.v1.SaveMetadataResponse>(
                service, METHODID_SAVE_METADATA)))
        .addMethod(
          getGetMetadataMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetMetadataRequest,
              dev.memoryd.v1.GetMetadataResponse>(
                service, METHODID_GET_METADATA)))
        .addMethod(
          getListMetadataMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ListMetadataRequest,
              dev.memoryd.v1.ListMetadataResponse>(
                service, METHODID_LIST_METADATA)))
        .addMethod(
          getDeleteMetadataMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.DeleteMetadataRequest,
              dev.memoryd.v1.DeleteMetadataResponse>(
                service, METHODID_DELETE_METADATA)))
        .build();
  }

  private static abstract class MetadataServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    MetadataServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.memoryd.v1.MetadataServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("MetadataService");
    }
  }

  private static final class MetadataServiceFileDescriptorSupplier
      extends MetadataServiceBaseDescriptorSupplier {
    MetadataServiceFileDescriptorSupplier() {}
  }

  private static final class MetadataServiceMethodDescriptorSupplier
      extends MetadataServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    MetadataServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (MetadataServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new MetadataServiceFileDescriptorSupplier())
              .addMethod(getSaveMetadataMethod())
              .addMethod(getGetMetadataMethod())
              .addMethod(getListMetadataMethod())
              .addMethod(getDeleteMetadataMethod())
              .build();
        }
      }
    }
    return result;
  }
}
