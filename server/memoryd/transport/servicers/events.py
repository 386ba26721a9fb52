"""memoryd.v1.EventService: Watch streams the durable event log through the watch hub; PublishEvent appends to it."""

from __future__ import annotations

import collections

from memoryd.domain import published
from memoryd.domain.limits import Limits
from memoryd.domain.models import Event, EventType
from memoryd.domain.store import Store
from memoryd.domain.watch import WatchFilter, WatchHub
from memoryd.transport.access import Gate
from memoryd.transport.convert import event_to_proto, payload_from_proto
from memoryd.transport.rpc import server_stream, unary
from memoryd.transport.validation import Check
from memoryd.v1 import event_service_pb2 as pb
from memoryd.v1 import event_service_pb2_grpc as pb_grpc


class _Responses:
    """Recently built WatchResponses by (tenant, seq): fan-out converts each event once, not once per stream.

    A response serves only the event it was built from (the same object, as the feed hands
    to every stream, or an equal one): an event redacted since (domain/erasure.py) keeps its
    seq, and its old response must not outlive it."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._items: collections.OrderedDict[tuple[str, int], tuple[Event, pb.WatchResponse]]
        self._items = collections.OrderedDict()

    def of(self, event: Event) -> pb.WatchResponse:
        key = (event.tenant, event.seq)
        cached = self._items.get(key)
        if cached is not None and (cached[0] is event or cached[0] == event):
            return cached[1]
        response = pb.WatchResponse(event=event_to_proto(event))
        self._items[key] = (event, response)
        if len(self._items) > self._size:
            self._items.popitem(last=False)
        return response


class EventServicer(pb_grpc.EventServiceServicer):
    def __init__(self, store: Store, hub: WatchHub, limits: Limits, auth: Gate) -> None:
        self.store = store
        self.hub = hub
        self.limits = limits
        self.auth = auth
        self._responses = _Responses()

    @server_stream
    async def Watch(self, request: pb.WatchRequest, context, tenant: str):
        check = Check(self.limits)
        check.names("session_ids", request.session_ids)
        if check.count("types", request.types, self.limits.max_filter_items):
            check.enum("types", request.types, [t.value for t in EventType])
        if request.HasField("after_seq"):
            check.non_negative("after_seq", request.after_seq)
        check.done()
        caller = context.caller
        # A user-bound caller gets the events stamped with its user only (domain/watch.py).
        watch_filter = WatchFilter(
            frozenset(request.session_ids), frozenset(EventType(t) for t in request.types), caller.user_id
        )
        after_seq = request.after_seq if request.HasField("after_seq") else None
        watcher = self.hub.watch(tenant, after_seq, watch_filter)
        # The stream lives no longer than its token: removed from the tokens file, or a JWT
        # past its expiry, it ends at once with UNAUTHENTICATED (docs/SECURITY.md, "Rotation").
        forget_revocation = self.auth.on_revoke(caller, watcher.stop)
        try:
            await watcher.start()
            # Headers now, before any event: a client that awaits them knows the watch's
            # starting point is fixed (etcd's "created"), so a watch "from now" can be
            # followed by writes without racing them.
            await context.send_initial_metadata(())
            # Each yield waits for gRPC flow control: a stream catching up reads its next
            # batch only when the client has taken the last one.
            async for item in watcher:
                if not isinstance(item, Event):
                    progress = pb.WatchProgress(latest_seq=item.latest_seq, head_seq=item.head_seq)
                    yield pb.WatchResponse(progress=progress)
                elif watcher.live:
                    yield self._responses.of(item)
                else:  # a replay is read by one stream: keep it out of the live events' cache
                    yield pb.WatchResponse(event=event_to_proto(item))
        finally:
            # Runs on cancellation too (CancelledError propagates: grpc issue 43360).
            forget_revocation()
            watcher.close()

    @unary
    async def PublishEvent(self, request: pb.PublishEventRequest, context, tenant: str) -> pb.PublishEventResponse:
        check = Check(self.limits)
        check.name("session_id", request.session_id)
        case = request.WhichOneof("payload")
        if case is None:
            check.fail("payload", "one of compress_requested or compress_progress is required")
        elif case == "compress_progress":
            progress = request.compress_progress
            if not 0 <= progress.progress <= 1:
                check.fail("compress_progress.progress", "must be between 0 and 1")
            check.name("compress_progress.phase", progress.phase, required=False)
            check.text_bytes("compress_progress.error", progress.error, self.limits.max_text_bytes)
        else:
            check.name("compress_requested.requested_by", request.compress_requested.requested_by, required=False)
            check.text_bytes("compress_requested.reason", request.compress_requested.reason, self.limits.max_text_bytes)
        check.done()
        payload = payload_from_proto(getattr(request, case))
        event = await published.publish(self.store, tenant, EventType[case.upper()], request.session_id, payload)
        return pb.PublishEventResponse(event=event_to_proto(event))
