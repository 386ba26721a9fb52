"""memory.v1.EventService: Watch tails the durable event log; PublishEvent appends to it."""

from __future__ import annotations

from google.protobuf import json_format

from memory.v1 import event_service_pb2 as pb
from memory.v1 import event_service_pb2_grpc as pb_grpc
from memoryd.domain.errors import OutOfRange
from memoryd.domain.models import EventDraft, EventType, now_ms
from memoryd.domain.store import Store
from memoryd.transport.auth import Authenticator
from memoryd.transport.convert import event_to_proto
from memoryd.transport.rpc import server_stream, unary
from memoryd.domain.limits import Limits
from memoryd.transport.validation import Check

READ_BATCH = 500
PROGRESS_INTERVAL_SECONDS = 10.0


class EventServicer(pb_grpc.EventServiceServicer):
    def __init__(self, store: Store, limits: Limits, auth: Authenticator) -> None:
        self.store = store
        self.limits = limits
        self.auth = auth

    @server_stream
    async def Watch(self, request: pb.WatchRequest, context, tenant: str):
        check = Check(self.limits)
        check.names("session_ids", request.session_ids)
        check.enum("types", request.types, [t.value for t in EventType])
        if request.HasField("after_seq"):
            check.non_negative("after_seq", request.after_seq)
        check.done()
        sessions = set(request.session_ids)
        types = set(request.types)
        floor, latest = await self.store.event_bounds(tenant)
        cursor = request.after_seq if request.HasField("after_seq") else latest
        if cursor < floor:
            raise OutOfRange(
                f"events up to seq {floor} were removed by retention; resync and watch from now",
                reason="EVENTS_COMPACTED",
                metadata={"oldest_seq": str(floor + 1)},
            )
        # Headers now, before any event: a client that awaits them knows the
        # watch is registered (etcd's "created"), so a watch "from now" can
        # be followed by writes without racing them.
        await context.send_initial_metadata(())
        notifier = self.store.notifier
        while True:
            changed = notifier.current()
            events = await self.store.read_events(tenant, cursor, READ_BATCH)
            for event in events:
                cursor = event.seq
                if types and event.type not in types:
                    continue
                if sessions and event.session_id and event.session_id not in sessions:
                    continue
                yield pb.WatchResponse(event=event_to_proto(event))
            if len(events) == READ_BATCH:
                continue
            if not await notifier.wait(changed, PROGRESS_INTERVAL_SECONDS):
                yield pb.WatchResponse(progress=pb.WatchProgress(latest_seq=cursor))

    @unary
    async def PublishEvent(self, request: pb.PublishEventRequest, context, tenant: str) -> pb.PublishEventResponse:
        check = Check(self.limits)
        check.name("session_id", request.session_id)
        case = request.WhichOneof("payload")
        if case is None:
            check.fail("payload", "one of compress_requested or compress_progress is required")
        elif case == "compress_progress" and not 0 <= request.compress_progress.progress <= 1:
            check.fail("compress_progress.progress", "must be between 0 and 1")
        check.done()
        event_type = EventType[case.upper()]
        payload = json_format.MessageToDict(getattr(request, case), preserving_proto_field_name=True)
        event = await self.store.publish(tenant, EventDraft(event_type, request.session_id, payload), now_ms())
        return pb.PublishEventResponse(event=event_to_proto(event))
