package dev.memoryd.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Stores chat messages per session and reads them back.
 * Every RPC validates its input before touching storage: invalid input gets
 * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field and nothing
 * is stored. Every mutation writes its events (see EventService) in the same
 * storage transaction as the change.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class MemoryServiceGrpc {

  private MemoryServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "memoryd.v1.MemoryService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SaveMessageRequest,
      dev.memoryd.v1.SaveMessageResponse> getSaveMessageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SaveMessage",
      requestType = dev.memoryd.v1.SaveMessageRequest.class,
      responseType = dev.memoryd.v1.SaveMessageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SaveMessageRequest,
      dev.memoryd.v1.SaveMessageResponse> getSaveMessageMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SaveMessageRequest, dev.memoryd.v1.SaveMessageResponse> getSaveMessageMethod;
    if ((getSaveMessageMethod = MemoryServiceGrpc.getSaveMessageMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getSaveMessageMethod = MemoryServiceGrpc.getSaveMessageMethod) == null) {
          MemoryServiceGrpc.getSaveMessageMethod = getSaveMessageMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SaveMessageRequest, dev.memoryd.v1.SaveMessageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SaveMessage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveMessageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveMessageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("SaveMessage"))
              .build();
        }
      }
    }
    return getSaveMessageMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.SaveMessagesRequest,
      dev.memoryd.v1.SaveMessagesResponse> getSaveMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SaveMessages",
      requestType = dev.memoryd.v1.SaveMessagesRequest.class,
      responseType = dev.memoryd.v1.SaveMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.SaveMessagesRequest,
      dev.memoryd.v1.SaveMessagesResponse> getSaveMessagesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.SaveMessagesRequest, dev.memoryd.v1.SaveMessagesResponse> getSaveMessagesMethod;
    if ((getSaveMessagesMethod = MemoryServiceGrpc.getSaveMessagesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getSaveMessagesMethod = MemoryServiceGrpc.getSaveMessagesMethod) == null) {
          MemoryServiceGrpc.getSaveMessagesMethod = getSaveMessagesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.SaveMessagesRequest, dev.memoryd.v1.SaveMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SaveMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.SaveMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("SaveMessages"))
              .build();
        }
      }
    }
    return getSaveMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetHistoryRequest,
      dev.memoryd.v1.GetHistoryResponse> getGetHistoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetHistory",
      requestType = dev.memoryd.v1.GetHistoryRequest.class,
      responseType = dev.memoryd.v1.GetHistoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetHistoryRequest,
      dev.memoryd.v1.GetHistoryResponse> getGetHistoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetHistoryRequest, dev.memoryd.v1.GetHistoryResponse> getGetHistoryMethod;
    if ((getGetHistoryMethod = MemoryServiceGrpc.getGetHistoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetHistoryMethod = MemoryServiceGrpc.getGetHistoryMethod) == null) {
          MemoryServiceGrpc.getGetHistoryMethod = getGetHistoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetHistoryRequest, dev.memoryd.v1.GetHistoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetHistory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetHistoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetHistoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetHistory"))
              .build();
        }
      }
    }
    return getGetHistoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetFullHistoryRequest,
      dev.memoryd.v1.GetFullHistoryResponse> getGetFullHistoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetFullHistory",
      requestType = dev.memoryd.v1.GetFullHistoryRequest.class,
      responseType = dev.memoryd.v1.GetFullHistoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetFullHistoryRequest,
      dev.memoryd.v1.GetFullHistoryResponse> getGetFullHistoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetFullHistoryRequest, dev.memoryd.v1.GetFullHistoryResponse> getGetFullHistoryMethod;
    if ((getGetFullHistoryMethod = MemoryServiceGrpc.getGetFullHistoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetFullHistoryMethod = MemoryServiceGrpc.getGetFullHistoryMethod) == null) {
          MemoryServiceGrpc.getGetFullHistoryMethod = getGetFullHistoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetFullHistoryRequest, dev.memoryd.v1.GetFullHistoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetFullHistory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetFullHistoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetFullHistoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetFullHistory"))
              .build();
        }
      }
    }
    return getGetFullHistoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ListMessagesInRangeRequest,
      dev.memoryd.v1.ListMessagesInRangeResponse> getListMessagesInRangeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListMessagesInRange",
      requestType = dev.memoryd.v1.ListMessagesInRangeRequest.class,
      responseType = dev.memoryd.v1.ListMessagesInRangeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ListMessagesInRangeRequest,
      dev.memoryd.v1.ListMessagesInRangeResponse> getListMessagesInRangeMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ListMessagesInRangeRequest, dev.memoryd.v1.ListMessagesInRangeResponse> getListMessagesInRangeMethod;
    if ((getListMessagesInRangeMethod = MemoryServiceGrpc.getListMessagesInRangeMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getListMessagesInRangeMethod = MemoryServiceGrpc.getListMessagesInRangeMethod) == null) {
          MemoryServiceGrpc.getListMessagesInRangeMethod = getListMessagesInRangeMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ListMessagesInRangeRequest, dev.memoryd.v1.ListMessagesInRangeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListMessagesInRange"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListMessagesInRangeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListMessagesInRangeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ListMessagesInRange"))
              .build();
        }
      }
    }
    return getListMessagesInRangeMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.GetRecentAcrossSessionsRequest,
      dev.memoryd.v1.GetRecentAcrossSessionsResponse> getGetRecentAcrossSessionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetRecentAcrossSessions",
      requestType = dev.memoryd.v1.GetRecentAcrossSessionsRequest.class,
      responseType = dev.memoryd.v1.GetRecentAcrossSessionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.GetRecentAcrossSessionsRequest,
      dev.memoryd.v1.GetRecentAcrossSessionsResponse> getGetRecentAcrossSessionsMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.GetRecentAcrossSessionsRequest, dev.memoryd.v1.GetRecentAcrossSessionsResponse> getGetRecentAcrossSessionsMethod;
    if ((getGetRecentAcrossSessionsMethod = MemoryServiceGrpc.getGetRecentAcrossSessionsMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetRecentAcrossSessionsMethod = MemoryServiceGrpc.getGetRecentAcrossSessionsMethod) == null) {
          MemoryServiceGrpc.getGetRecentAcrossSessionsMethod = getGetRecentAcrossSessionsMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.GetRecentAcrossSessionsRequest, dev.memoryd.v1.GetRecentAcrossSessionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetRecentAcrossSessions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetRecentAcrossSessionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.GetRecentAcrossSessionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetRecentAcrossSessions"))
              .build();
        }
      }
    }
    return getGetRecentAcrossSessionsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.TrimHistoryRequest,
      dev.memoryd.v1.TrimHistoryResponse> getTrimHistoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "TrimHistory",
      requestType = dev.memoryd.v1.TrimHistoryRequest.class,
      responseType = dev.memoryd.v1.TrimHistoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.TrimHistoryRequest,
      dev.memoryd.v1.TrimHistoryResponse> getTrimHistoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.TrimHistoryRequest, dev.memoryd.v1.TrimHistoryResponse> getTrimHistoryMethod;
    if ((getTrimHistoryMethod = MemoryServiceGrpc.getTrimHistoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getTrimHistoryMethod = MemoryServiceGrpc.getTrimHistoryMethod) == null) {
          MemoryServiceGrpc.getTrimHistoryMethod = getTrimHistoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.TrimHistoryRequest, dev.memoryd.v1.TrimHistoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "TrimHistory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.TrimHistoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.TrimHistoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("TrimHistory"))
              .build();
        }
      }
    }
    return getTrimHistoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ReplaceHistoryRequest,
      dev.memoryd.v1.ReplaceHistoryResponse> getReplaceHistoryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ReplaceHistory",
      requestType = dev.memoryd.v1.ReplaceHistoryRequest.class,
      responseType = dev.memoryd.v1.ReplaceHistoryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ReplaceHistoryRequest,
      dev.memoryd.v1.ReplaceHistoryResponse> getReplaceHistoryMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ReplaceHistoryRequest, dev.memoryd.v1.ReplaceHistoryResponse> getReplaceHistoryMethod;
    if ((getReplaceHistoryMethod = MemoryServiceGrpc.getReplaceHistoryMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getReplaceHistoryMethod = MemoryServiceGrpc.getReplaceHistoryMethod) == null) {
          MemoryServiceGrpc.getReplaceHistoryMethod = getReplaceHistoryMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ReplaceHistoryRequest, dev.memoryd.v1.ReplaceHistoryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ReplaceHistory"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ReplaceHistoryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ReplaceHistoryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ReplaceHistory"))
              .build();
        }
      }
    }
    return getReplaceHistoryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.UpdateMessageContentRequest,
      dev.memoryd.v1.UpdateMessageContentResponse> getUpdateMessageContentMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateMessageContent",
      requestType = dev.memoryd.v1.UpdateMessageContentRequest.class,
      responseType = dev.memoryd.v1.UpdateMessageContentResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.UpdateMessageContentRequest,
      dev.memoryd.v1.UpdateMessageContentResponse> getUpdateMessageContentMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.UpdateMessageContentRequest, dev.memoryd.v1.UpdateMessageContentResponse> getUpdateMessageContentMethod;
    if ((getUpdateMessageContentMethod = MemoryServiceGrpc.getUpdateMessageContentMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getUpdateMessageContentMethod = MemoryServiceGrpc.getUpdateMessageContentMethod) == null) {
          MemoryServiceGrpc.getUpdateMessageContentMethod = getUpdateMessageContentMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.UpdateMessageContentRequest, dev.memoryd.v1.UpdateMessageContentResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateMessageContent"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.UpdateMessageContentRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.UpdateMessageContentResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("UpdateMessageContent"))
              .build();
        }
      }
    }
    return getUpdateMessageContentMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMessagesByTimestampsRequest,
      dev.memoryd.v1.DeleteMessagesByTimestampsResponse> getDeleteMessagesByTimestampsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteMessagesByTimestamps",
      requestType = dev.memoryd.v1.DeleteMessagesByTimestampsRequest.class,
      responseType = dev.memoryd.v1.DeleteMessagesByTimestampsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMessagesByTimestampsRequest,
      dev.memoryd.v1.DeleteMessagesByTimestampsResponse> getDeleteMessagesByTimestampsMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMessagesByTimestampsRequest, dev.memoryd.v1.DeleteMessagesByTimestampsResponse> getDeleteMessagesByTimestampsMethod;
    if ((getDeleteMessagesByTimestampsMethod = MemoryServiceGrpc.getDeleteMessagesByTimestampsMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getDeleteMessagesByTimestampsMethod = MemoryServiceGrpc.getDeleteMessagesByTimestampsMethod) == null) {
          MemoryServiceGrpc.getDeleteMessagesByTimestampsMethod = getDeleteMessagesByTimestampsMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.DeleteMessagesByTimestampsRequest, dev.memoryd.v1.DeleteMessagesByTimestampsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteMessagesByTimestamps"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteMessagesByTimestampsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteMessagesByTimestampsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("DeleteMessagesByTimestamps"))
              .build();
        }
      }
    }
    return getDeleteMessagesByTimestampsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMessagesRequest,
      dev.memoryd.v1.DeleteMessagesResponse> getDeleteMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteMessages",
      requestType = dev.memoryd.v1.DeleteMessagesRequest.class,
      responseType = dev.memoryd.v1.DeleteMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMessagesRequest,
      dev.memoryd.v1.DeleteMessagesResponse> getDeleteMessagesMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.DeleteMessagesRequest, dev.memoryd.v1.DeleteMessagesResponse> getDeleteMessagesMethod;
    if ((getDeleteMessagesMethod = MemoryServiceGrpc.getDeleteMessagesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getDeleteMessagesMethod = MemoryServiceGrpc.getDeleteMessagesMethod) == null) {
          MemoryServiceGrpc.getDeleteMessagesMethod = getDeleteMessagesMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.DeleteMessagesRequest, dev.memoryd.v1.DeleteMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.DeleteMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("DeleteMessages"))
              .build();
        }
      }
    }
    return getDeleteMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ClearSessionRequest,
      dev.memoryd.v1.ClearSessionResponse> getClearSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ClearSession",
      requestType = dev.memoryd.v1.ClearSessionRequest.class,
      responseType = dev.memoryd.v1.ClearSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ClearSessionRequest,
      dev.memoryd.v1.ClearSessionResponse> getClearSessionMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ClearSessionRequest, dev.memoryd.v1.ClearSessionResponse> getClearSessionMethod;
    if ((getClearSessionMethod = MemoryServiceGrpc.getClearSessionMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getClearSessionMethod = MemoryServiceGrpc.getClearSessionMethod) == null) {
          MemoryServiceGrpc.getClearSessionMethod = getClearSessionMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ClearSessionRequest, dev.memoryd.v1.ClearSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ClearSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ClearSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ClearSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ClearSession"))
              .build();
        }
      }
    }
    return getClearSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ClearAllRequest,
      dev.memoryd.v1.ClearAllResponse> getClearAllMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ClearAll",
      requestType = dev.memoryd.v1.ClearAllRequest.class,
      responseType = dev.memoryd.v1.ClearAllResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ClearAllRequest,
      dev.memoryd.v1.ClearAllResponse> getClearAllMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ClearAllRequest, dev.memoryd.v1.ClearAllResponse> getClearAllMethod;
    if ((getClearAllMethod = MemoryServiceGrpc.getClearAllMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getClearAllMethod = MemoryServiceGrpc.getClearAllMethod) == null) {
          MemoryServiceGrpc.getClearAllMethod = getClearAllMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ClearAllRequest, dev.memoryd.v1.ClearAllResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ClearAll"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ClearAllRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ClearAllResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ClearAll"))
              .build();
        }
      }
    }
    return getClearAllMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.memoryd.v1.ListSessionsRequest,
      dev.memoryd.v1.ListSessionsResponse> getListSessionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListSessions",
      requestType = dev.memoryd.v1.ListSessionsRequest.class,
      responseType = dev.memoryd.v1.ListSessionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.memoryd.v1.ListSessionsRequest,
      dev.memoryd.v1.ListSessionsResponse> getListSessionsMethod() {
    io.grpc.MethodDescriptor<dev.memoryd.v1.ListSessionsRequest, dev.memoryd.v1.ListSessionsResponse> getListSessionsMethod;
    if ((getListSessionsMethod = MemoryServiceGrpc.getListSessionsMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getListSessionsMethod = MemoryServiceGrpc.getListSessionsMethod) == null) {
          MemoryServiceGrpc.getListSessionsMethod = getListSessionsMethod =
              io.grpc.MethodDescriptor.<dev.memoryd.v1.ListSessionsRequest, dev.memoryd.v1.ListSessionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListSessions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListSessionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.memoryd.v1.ListSessionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ListSessions"))
              .build();
        }
      }
    }
    return getListSessionsMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static MemoryServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceStub>() {
        @java.lang.Override
        public MemoryServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceStub(channel, callOptions);
        }
      };
    return MemoryServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static MemoryServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingV2Stub>() {
        @java.lang.Override
        public MemoryServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return MemoryServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static MemoryServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingStub>() {
        @java.lang.Override
        public MemoryServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceBlockingStub(channel, callOptions);
        }
      };
    return MemoryServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static MemoryServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceFutureStub>() {
        @java.lang.Override
        public MemoryServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceFutureStub(channel, callOptions);
        }
      };
    return MemoryServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Stores chat messages per session and reads them back.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field and nothing
   * is stored. Every mutation writes its events (see EventService) in the same
   * storage transaction as the change.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Appends one message to a session. With an idempotency key, retries of the
     * same key in the same session store nothing new and return the first result.
     * </pre>
     */
    default void saveMessage(dev.memoryd.v1.SaveMessageRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveMessageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSaveMessageMethod(), responseObserver);
    }

    /**
     * <pre>
     * Appends a batch of messages atomically: all are stored or none is.
     * </pre>
     */
    default void saveMessages(dev.memoryd.v1.SaveMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSaveMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages of a session, oldest first.
     * </pre>
     */
    default void getHistory(dev.memoryd.v1.GetHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetHistoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetHistoryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Pages through all messages of a session (archived included), oldest first.
     * </pre>
     */
    default void getFullHistory(dev.memoryd.v1.GetFullHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetFullHistoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetFullHistoryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns messages of a session in an inclusive timestamp range, archived
     * included, oldest first.
     * </pre>
     */
    default void listMessagesInRange(dev.memoryd.v1.ListMessagesInRangeRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListMessagesInRangeResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListMessagesInRangeMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages across sessions that match the
     * filters, oldest first, each with its session id.
     * </pre>
     */
    default void getRecentAcrossSessions(dev.memoryd.v1.GetRecentAcrossSessionsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetRecentAcrossSessionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetRecentAcrossSessionsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Archives all but the newest `keep_recent` unarchived messages of a session.
     * </pre>
     */
    default void trimHistory(dev.memoryd.v1.TrimHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.TrimHistoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getTrimHistoryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Atomically swaps the unarchived history of a session for new messages.
     * </pre>
     */
    default void replaceHistory(dev.memoryd.v1.ReplaceHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ReplaceHistoryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getReplaceHistoryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Replaces text in the content of the newest messages of a session.
     * </pre>
     */
    default void updateMessageContent(dev.memoryd.v1.UpdateMessageContentRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.UpdateMessageContentResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateMessageContentMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes the messages of a session that carry any of the given timestamps.
     * </pre>
     */
    default void deleteMessagesByTimestamps(dev.memoryd.v1.DeleteMessagesByTimestampsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMessagesByTimestampsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteMessagesByTimestampsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes messages of a session by id.
     * </pre>
     */
    default void deleteMessages(dev.memoryd.v1.DeleteMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Clears one session's messages, vectors and/or metadata.
     * </pre>
     */
    default void clearSession(dev.memoryd.v1.ClearSessionRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ClearSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getClearSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Clears every session of the caller's tenant.
     * </pre>
     */
    default void clearAll(dev.memoryd.v1.ClearAllRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ClearAllResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getClearAllMethod(), responseObserver);
    }

    /**
     * <pre>
     * Pages through the sessions that hold messages, ordered by session id.
     * </pre>
     */
    default void listSessions(dev.memoryd.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSessionsMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service MemoryService.
   * <pre>
   * Stores chat messages per session and reads them back.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field and nothing
   * is stored. Every mutation writes its events (see EventService) in the same
   * storage transaction as the change.
   * </pre>
   */
  public static abstract class MemoryServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return MemoryServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service MemoryService.
   * <pre>
   * Stores chat messages per session and reads them back.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field and nothing
   * is stored. Every mutation writes its events (see EventService) in the same
   * storage transaction as the change.
   * </pre>
   */
  public static final class MemoryServiceStub
      extends io.grpc.stub.AbstractAsyncStub<MemoryServiceStub> {
    private MemoryServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Appends one message to a session. With an idempotency key, retries of the
     * same key in the same session store nothing new and return the first result.
     * </pre>
     */
    public void saveMessage(dev.memoryd.v1.SaveMessageRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveMessageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSaveMessageMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Appends a batch of messages atomically: all are stored or none is.
     * </pre>
     */
    public void saveMessages(dev.memoryd.v1.SaveMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSaveMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages of a session, oldest first.
     * </pre>
     */
    public void getHistory(dev.memoryd.v1.GetHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetHistoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetHistoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Pages through all messages of a session (archived included), oldest first.
     * </pre>
     */
    public void getFullHistory(dev.memoryd.v1.GetFullHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetFullHistoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetFullHistoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns messages of a session in an inclusive timestamp range, archived
     * included, oldest first.
     * </pre>
     */
    public void listMessagesInRange(dev.memoryd.v1.ListMessagesInRangeRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListMessagesInRangeResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListMessagesInRangeMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages across sessions that match the
     * filters, oldest first, each with its session id.
     * </pre>
     */
    public void getRecentAcrossSessions(dev.memoryd.v1.GetRecentAcrossSessionsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.GetRecentAcrossSessionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetRecentAcrossSessionsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Archives all but the newest `keep_recent` unarchived messages of a session.
     * </pre>
     */
    public void trimHistory(dev.memoryd.v1.TrimHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.TrimHistoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getTrimHistoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Atomically swaps the unarchived history of a session for new messages.
     * </pre>
     */
    public void replaceHistory(dev.memoryd.v1.ReplaceHistoryRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ReplaceHistoryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getReplaceHistoryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Replaces text in the content of the newest messages of a session.
     * </pre>
     */
    public void updateMessageContent(dev.memoryd.v1.UpdateMessageContentRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.UpdateMessageContentResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateMessageContentMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes the messages of a session that carry any of the given timestamps.
     * </pre>
     */
    public void deleteMessagesByTimestamps(dev.memoryd.v1.DeleteMessagesByTimestampsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMessagesByTimestampsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteMessagesByTimestampsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes messages of a session by id.
     * </pre>
     */
    public void deleteMessages(dev.memoryd.v1.DeleteMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Clears one session's messages, vectors and/or metadata.
     * </pre>
     */
    public void clearSession(dev.memoryd.v1.ClearSessionRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ClearSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getClearSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Clears every session of the caller's tenant.
     * </pre>
     */
    public void clearAll(dev.memoryd.v1.ClearAllRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ClearAllResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getClearAllMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Pages through the sessions that hold messages, ordered by session id.
     * </pre>
     */
    public void listSessions(dev.memoryd.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<dev.memoryd.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service MemoryService.
   * <pre>
   * Stores chat messages per session and reads them back.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field and nothing
   * is stored. Every mutation writes its events (see EventService) in the same
   * storage transaction as the change.
   * </pre>
   */
  public static final class MemoryServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<MemoryServiceBlockingV2Stub> {
    private MemoryServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Appends one message to a session. With an idempotency key, retries of the
     * same key in the same session store nothing new and return the first result.
     * </pre>
     */
    public dev.memoryd.v1.SaveMessageResponse saveMessage(dev.memoryd.v1.SaveMessageRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSaveMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Appends a batch of messages atomically: all are stored or none is.
     * </pre>
     */
    public dev.memoryd.v1.SaveMessagesResponse saveMessages(dev.memoryd.v1.SaveMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSaveMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages of a session, oldest first.
     * </pre>
     */
    public dev.memoryd.v1.GetHistoryResponse getHistory(dev.memoryd.v1.GetHistoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through all messages of a session (archived included), oldest first.
     * </pre>
     */
    public dev.memoryd.v1.GetFullHistoryResponse getFullHistory(dev.memoryd.v1.GetFullHistoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetFullHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns messages of a session in an inclusive timestamp range, archived
     * included, oldest first.
     * </pre>
     */
    public dev.memoryd.v1.ListMessagesInRangeResponse listMessagesInRange(dev.memoryd.v1.ListMessagesInRangeRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListMessagesInRangeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages across sessions that match the
     * filters, oldest first, each with its session id.
     * </pre>
     */
    public dev.memoryd.v1.GetRecentAcrossSessionsResponse getRecentAcrossSessions(dev.memoryd.v1.GetRecentAcrossSessionsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetRecentAcrossSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Archives all but the newest `keep_recent` unarchived messages of a session.
     * </pre>
     */
    public dev.memoryd.v1.TrimHistoryResponse trimHistory(dev.memoryd.v1.TrimHistoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getTrimHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Atomically swaps the unarchived history of a session for new messages.
     * </pre>
     */
    public dev.memoryd.v1.ReplaceHistoryResponse replaceHistory(dev.memoryd.v1.ReplaceHistoryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getReplaceHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Replaces text in the content of the newest messages of a session.
     * </pre>
     */
    public dev.memoryd.v1.UpdateMessageContentResponse updateMessageContent(dev.memoryd.v1.UpdateMessageContentRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUpdateMessageContentMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes the messages of a session that carry any of the given timestamps.
     * </pre>
     */
    public dev.memoryd.v1.DeleteMessagesByTimestampsResponse deleteMessagesByTimestamps(dev.memoryd.v1.DeleteMessagesByTimestampsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteMessagesByTimestampsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes messages of a session by id.
     * </pre>
     */
    public dev.memoryd.v1.DeleteMessagesResponse deleteMessages(dev.memoryd.v1.DeleteMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Clears one session's messages, vectors and/or metadata.
     * </pre>
     */
    public dev.memoryd.v1.ClearSessionResponse clearSession(dev.memoryd.v1.ClearSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getClearSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Clears every session of the caller's tenant.
     * </pre>
     */
    public dev.memoryd.v1.ClearAllResponse clearAll(dev.memoryd.v1.ClearAllRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getClearAllMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through the sessions that hold messages, ordered by session id.
     * </pre>
     */
    public dev.memoryd.v1.ListSessionsResponse listSessions(dev.memoryd.v1.ListSessionsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service MemoryService.
   * <pre>
   * Stores chat messages per session and reads them back.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field and nothing
   * is stored. Every mutation writes its events (see EventService) in the same
   * storage transaction as the change.
   * </pre>
   */
  public static final class MemoryServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<MemoryServiceBlockingStub> {
    private MemoryServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Appends one message to a session. With an idempotency key, retries of the
     * same key in the same session store nothing new and return the first result.
     * </pre>
     */
    public dev.memoryd.v1.SaveMessageResponse saveMessage(dev.memoryd.v1.SaveMessageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSaveMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Appends a batch of messages atomically: all are stored or none is.
     * </pre>
     */
    public dev.memoryd.v1.SaveMessagesResponse saveMessages(dev.memoryd.v1.SaveMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSaveMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages of a session, oldest first.
     * </pre>
     */
    public dev.memoryd.v1.GetHistoryResponse getHistory(dev.memoryd.v1.GetHistoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through all messages of a session (archived included), oldest first.
     * </pre>
     */
    public dev.memoryd.v1.GetFullHistoryResponse getFullHistory(dev.memoryd.v1.GetFullHistoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetFullHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns messages of a session in an inclusive timestamp range, archived
     * included, oldest first.
     * </pre>
     */
    public dev.memoryd.v1.ListMessagesInRangeResponse listMessagesInRange(dev.memoryd.v1.ListMessagesInRangeRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListMessagesInRangeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages across sessions that match the
     * filters, oldest first, each with its session id.
     * </pre>
     */
    public dev.memoryd.v1.GetRecentAcrossSessionsResponse getRecentAcrossSessions(dev.memoryd.v1.GetRecentAcrossSessionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetRecentAcrossSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Archives all but the newest `keep_recent` unarchived messages of a session.
     * </pre>
     */
    public dev.memoryd.v1.TrimHistoryResponse trimHistory(dev.memoryd.v1.TrimHistoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getTrimHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Atomically swaps the unarchived history of a session for new messages.
     * </pre>
     */
    public dev.memoryd.v1.ReplaceHistoryResponse replaceHistory(dev.memoryd.v1.ReplaceHistoryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getReplaceHistoryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Replaces text in the content of the newest messages of a session.
     * </pre>
     */
    public dev.memoryd.v1.UpdateMessageContentResponse updateMessageContent(dev.memoryd.v1.UpdateMessageContentRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateMessageContentMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes the messages of a session that carry any of the given timestamps.
     * </pre>
     */
    public dev.memoryd.v1.DeleteMessagesByTimestampsResponse deleteMessagesByTimestamps(dev.memoryd.v1.DeleteMessagesByTimestampsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteMessagesByTimestampsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes messages of a session by id.
     * </pre>
     */
    public dev.memoryd.v1.DeleteMessagesResponse deleteMessages(dev.memoryd.v1.DeleteMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Clears one session's messages, vectors and/or metadata.
     * </pre>
     */
    public dev.memoryd.v1.ClearSessionResponse clearSession(dev.memoryd.v1.ClearSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getClearSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Clears every session of the caller's tenant.
     * </pre>
     */
    public dev.memoryd.v1.ClearAllResponse clearAll(dev.memoryd.v1.ClearAllRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getClearAllMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Pages through the sessions that hold messages, ordered by session id.
     * </pre>
     */
    public dev.memoryd.v1.ListSessionsResponse listSessions(dev.memoryd.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service MemoryService.
   * <pre>
   * Stores chat messages per session and reads them back.
   * Every RPC validates its input before touching storage: invalid input gets
   * INVALID_ARGUMENT with a google.rpc.BadRequest naming the field and nothing
   * is stored. Every mutation writes its events (see EventService) in the same
   * storage transaction as the change.
   * </pre>
   */
  public static final class MemoryServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<MemoryServiceFutureStub> {
    private MemoryServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Appends one message to a session. With an idempotency key, retries of the
     * same key in the same session store nothing new and return the first result.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SaveMessageResponse> saveMessage(
        dev.memoryd.v1.SaveMessageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSaveMessageMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Appends a batch of messages atomically: all are stored or none is.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.SaveMessagesResponse> saveMessages(
        dev.memoryd.v1.SaveMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSaveMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages of a session, oldest first.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetHistoryResponse> getHistory(
        dev.memoryd.v1.GetHistoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetHistoryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Pages through all messages of a session (archived included), oldest first.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetFullHistoryResponse> getFullHistory(
        dev.memoryd.v1.GetFullHistoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetFullHistoryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns messages of a session in an inclusive timestamp range, archived
     * included, oldest first.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ListMessagesInRangeResponse> listMessagesInRange(
        dev.memoryd.v1.ListMessagesInRangeRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListMessagesInRangeMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns the newest unarchived messages across sessions that match the
     * filters, oldest first, each with its session id.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.GetRecentAcrossSessionsResponse> getRecentAcrossSessions(
        dev.memoryd.v1.GetRecentAcrossSessionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetRecentAcrossSessionsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Archives all but the newest `keep_recent` unarchived messages of a session.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.TrimHistoryResponse> trimHistory(
        dev.memoryd.v1.TrimHistoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getTrimHistoryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Atomically swaps the unarchived history of a session for new messages.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ReplaceHistoryResponse> replaceHistory(
        dev.memoryd.v1.ReplaceHistoryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getReplaceHistoryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Replaces text in the content of the newest messages of a session.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.UpdateMessageContentResponse> updateMessageContent(
        dev.memoryd.v1.UpdateMessageContentRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateMessageContentMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes the messages of a session that carry any of the given timestamps.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.DeleteMessagesByTimestampsResponse> deleteMessagesByTimestamps(
        dev.memoryd.v1.DeleteMessagesByTimestampsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteMessagesByTimestampsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes messages of a session by id.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.DeleteMessagesResponse> deleteMessages(
        dev.memoryd.v1.DeleteMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Clears one session's messages, vectors and/or metadata.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ClearSessionResponse> clearSession(
        dev.memoryd.v1.ClearSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getClearSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Clears every session of the caller's tenant.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ClearAllResponse> clearAll(
        dev.memoryd.v1.ClearAllRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getClearAllMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Pages through the sessions that hold messages, ordered by session id.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.memoryd.v1.ListSessionsResponse> listSessions(
        dev.memoryd.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SAVE_MESSAGE = 0;
  private static final int METHODID_SAVE_MESSAGES = 1;
  private static final int METHODID_GET_HISTORY = 2;
  private static final int METHODID_GET_FULL_HISTORY = 3;
  private static final int METHODID_LIST_MESSAGES_IN_RANGE = 4;
  private static final int METHODID_GET_RECENT_ACROSS_SESSIONS = 5;
  private static final int METHODID_TRIM_HISTORY = 6;
  private static final int METHODID_REPLACE_HISTORY = 7;
  private static final int METHODID_UPDATE_MESSAGE_CONTENT = 8;
  private static final int METHODID_DELETE_MESSAGES_BY_TIMESTAMPS = 9;
  private static final int METHODID_DELETE_MESSAGES = 10;
  private static final int METHODID_CLEAR_SESSION = 11;
  private static final int METHODID_CLEAR_ALL = 12;
  private static final int METHODID_LIST_SESSIONS = 13;

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
        case METHODID_SAVE_MESSAGE:
          serviceImpl.saveMessage((dev.memoryd.v1.SaveMessageRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveMessageResponse>) responseObserver);
          break;
        case METHODID_SAVE_MESSAGES:
          serviceImpl.saveMessages((dev.memoryd.v1.SaveMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.SaveMessagesResponse>) responseObserver);
          break;
        case METHODID_GET_HISTORY:
          serviceImpl.getHistory((dev.memoryd.v1.GetHistoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetHistoryResponse>) responseObserver);
          break;
        case METHODID_GET_FULL_HISTORY:
          serviceImpl.getFullHistory((dev.memoryd.v1.GetFullHistoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetFullHistoryResponse>) responseObserver);
          break;
        case METHODID_LIST_MESSAGES_IN_RANGE:
          serviceImpl.listMessagesInRange((dev.memoryd.v1.ListMessagesInRangeRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ListMessagesInRangeResponse>) responseObserver);
          break;
        case METHODID_GET_RECENT_ACROSS_SESSIONS:
          serviceImpl.getRecentAcrossSessions((dev.memoryd.v1.GetRecentAcrossSessionsRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.GetRecentAcrossSessionsResponse>) responseObserver);
          break;
        case METHODID_TRIM_HISTORY:
          serviceImpl.trimHistory((dev.memoryd.v1.TrimHistoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.TrimHistoryResponse>) responseObserver);
          break;
        case METHODID_REPLACE_HISTORY:
          serviceImpl.replaceHistory((dev.memoryd.v1.ReplaceHistoryRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ReplaceHistoryResponse>) responseObserver);
          break;
        case METHODID_UPDATE_MESSAGE_CONTENT:
          serviceImpl.updateMessageContent((dev.memoryd.v1.UpdateMessageContentRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.UpdateMessageContentResponse>) responseObserver);
          break;
        case METHODID_DELETE_MESSAGES_BY_TIMESTAMPS:
          serviceImpl.deleteMessagesByTimestamps((dev.memoryd.v1.DeleteMessagesByTimestampsRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMessagesByTimestampsResponse>) responseObserver);
          break;
        case METHODID_DELETE_MESSAGES:
          serviceImpl.deleteMessages((dev.memoryd.v1.DeleteMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.DeleteMessagesResponse>) responseObserver);
          break;
        case METHODID_CLEAR_SESSION:
          serviceImpl.clearSession((dev.memoryd.v1.ClearSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ClearSessionResponse>) responseObserver);
          break;
        case METHODID_CLEAR_ALL:
          serviceImpl.clearAll((dev.memoryd.v1.ClearAllRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ClearAllResponse>) responseObserver);
          break;
        case METHODID_LIST_SESSIONS:
          serviceImpl.listSessions((dev.memoryd.v1.ListSessionsRequest) request,
              (io.grpc.stub.StreamObserver<dev.memoryd.v1.ListSessionsResponse>) responseObserver);
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
          getSaveMessageMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SaveMessageRequest,
              dev.memoryd.v1.SaveMessageResponse>(
                service, METHODID_SAVE_MESSAGE)))
        .addMethod(
          getSaveMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.SaveMessagesRequest,
              dev.memoryd.v1.SaveMessagesResponse>(
                service, METHODID_SAVE_MESSAGES)))
        .addMethod(
          getGetHistoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetHistoryRequest,
              dev.memoryd.v1.GetHistoryResponse>(
                service, METHODID_GET_HISTORY)))
        .addMethod(
          getGetFullHistoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetFullHistoryRequest,
              dev.memoryd.v1.GetFullHistoryResponse>(
                service, METHODID_GET_FULL_HISTORY)))
        .addMethod(
          getListMessagesInRangeMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ListMessagesInRangeRequest,
              dev.memoryd.v1.ListMessagesInRangeResponse>(
                service, METHODID_LIST_MESSAGES_IN_RANGE)))
        .addMethod(
          getGetRecentAcrossSessionsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.GetRecentAcrossSessionsRequest,
              dev.memoryd.v1.GetRecentAcrossSessionsResponse>(
                service, METHODID_GET_RECENT_ACROSS_SESSIONS)))
        .addMethod(
          getTrimHistoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.TrimHistoryRequest,
              dev.memoryd.v1.TrimHistoryResponse>(
                service, METHODID_TRIM_HISTORY)))
        .addMethod(
          getReplaceHistoryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ReplaceHistoryRequest,
              dev.memoryd.v1.ReplaceHistoryResponse>(
                service, METHODID_REPLACE_HISTORY)))
        .addMethod(
          getUpdateMessageContentMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.UpdateMessageContentRequest,
              dev.memoryd.v1.UpdateMessageContentResponse>(
                service, METHODID_UPDATE_MESSAGE_CONTENT)))
        .addMethod(
          getDeleteMessagesByTimestampsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.DeleteMessagesByTimestampsRequest,
              dev.memoryd.v1.DeleteMessagesByTimestampsResponse>(
                service, METHODID_DELETE_MESSAGES_BY_TIMESTAMPS)))
        .addMethod(
          getDeleteMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.DeleteMessagesRequest,
              dev.memoryd.v1.DeleteMessagesResponse>(
                service, METHODID_DELETE_MESSAGES)))
        .addMethod(
          getClearSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ClearSessionRequest,
              dev.memoryd.v1.ClearSessionResponse>(
                service, METHODID_CLEAR_SESSION)))
        .addMethod(
          getClearAllMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ClearAllRequest,
              dev.memoryd.v1.ClearAllResponse>(
                service, METHODID_CLEAR_ALL)))
        .addMethod(
          getListSessionsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.memoryd.v1.ListSessionsRequest,
              dev.memoryd.v1.ListSessionsResponse>(
                service, METHODID_LIST_SESSIONS)))
        .build();
  }

  private static abstract class MemoryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    MemoryServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.memoryd.v1.MemoryServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("MemoryService");
    }
  }

  private static final class MemoryServiceFileDescriptorSupplier
      extends MemoryServiceBaseDescriptorSupplier {
    MemoryServiceFileDescriptorSupplier() {}
  }

  private static final class MemoryServiceMethodDescriptorSupplier
      extends MemoryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    MemoryServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (MemoryServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new MemoryServiceFileDescriptorSupplier())
              .addMethod(getSaveMessageMethod())
              .addMethod(getSaveMessagesMethod())
              .addMethod(getGetHistoryMethod())
              .addMethod(getGetFullHistoryMethod())
              .addMethod(getListMessagesInRangeMethod())
              .addMethod(getGetRecentAcrossSessionsMethod())
              .addMethod(getTrimHistoryMethod())
              .addMethod(getReplaceHistoryMethod())
              .addMethod(getUpdateMessageContentMethod())
              .addMethod(getDeleteMessagesByTimestampsMethod())
              .addMethod(getDeleteMessagesMethod())
              .addMethod(getClearSessionMethod())
              .addMethod(getClearAllMethod())
              .addMethod(getListSessionsMethod())
              .build();
        }
      }
    }
    return result;
  }
}
