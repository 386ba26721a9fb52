"""memoryd.v1.MetadataService."""

from __future__ import annotations

from memoryd.domain.memory import Memory
from memoryd.transport.access import Gate
from memoryd.transport.convert import metadata_to_proto, struct_to_dict
from memoryd.transport.rpc import unary
from memoryd.transport.validation import Check
from memoryd.v1 import metadata_service_pb2 as pb
from memoryd.v1 import metadata_service_pb2_grpc as pb_grpc


class MetadataServicer(pb_grpc.MetadataServiceServicer):
    def __init__(self, memory: Memory, auth: Gate) -> None:
        self.memory = memory
        self.auth = auth
        self.limits = memory.limits

    def _check(self, request, *, key: bool = True) -> Check:
        check = Check(self.limits)
        check.name("namespace", request.namespace)
        if key:
            check.name("key", request.key)
        return check

    @unary
    async def SaveMetadata(self, request: pb.SaveMetadataRequest, context, tenant: str) -> pb.SaveMetadataResponse:
        check = self._check(request)
        if request.data.ByteSize() > self.limits.max_metadata_bytes:
            check.fail("data", f"must be at most {self.limits.max_metadata_bytes} bytes")
        check.struct("data", request.data)
        check.done()
        entry = await self.memory.save_metadata(tenant, request.namespace, request.key, struct_to_dict(request.data))
        response = pb.SaveMetadataResponse()
        metadata_to_proto(entry, response.entry)
        return response

    @unary
    async def GetMetadata(self, request: pb.GetMetadataRequest, context, tenant: str) -> pb.GetMetadataResponse:
        self._check(request).done()
        entry = await self.memory.get_metadata(tenant, request.namespace, request.key)
        response = pb.GetMetadataResponse(found=entry is not None)
        if entry is not None:
            metadata_to_proto(entry, response.entry)
        return response

    @unary
    async def ListMetadata(self, request: pb.ListMetadataRequest, context, tenant: str) -> pb.ListMetadataResponse:
        by_prefix = request.HasField("namespace_prefix")
        if by_prefix:
            check = Check(self.limits)
            check.name("namespace_prefix", request.namespace_prefix, required=False)
            if request.namespace:
                check.fail("namespace", "must be empty when namespace_prefix is set")
        else:
            check = self._check(request, key=False)
        check.page_size("page_size", request.page_size)
        check.done()
        if by_prefix:
            entries, token = await self.memory.list_metadata_by_prefix(
                tenant, request.namespace_prefix, request.page_size, request.page_token
            )
        else:
            entries, token = await self.memory.list_metadata(
                tenant, request.namespace, request.page_size, request.page_token
            )
        response = pb.ListMetadataResponse(next_page_token=token)
        for entry in entries:
            metadata_to_proto(entry, response.entries.add())
        return response

    @unary
    async def DeleteMetadata(
        self, request: pb.DeleteMetadataRequest, context, tenant: str
    ) -> pb.DeleteMetadataResponse:
        self._check(request).done()
        deleted = await self.memory.delete_metadata(tenant, request.namespace, request.key)
        return pb.DeleteMetadataResponse(deleted=deleted)

    @unary
    async def ListNamespaces(
        self, request: pb.ListNamespacesRequest, context, tenant: str
    ) -> pb.ListNamespacesResponse:
        check = Check(self.limits)
        check.name("prefix", request.prefix, required=False)
        check.page_size("page_size", request.page_size)
        check.done()
        namespaces, token = await self.memory.list_namespaces(
            tenant, request.prefix, request.page_size, request.page_token
        )
        return pb.ListNamespacesResponse(namespaces=namespaces, next_page_token=token)
