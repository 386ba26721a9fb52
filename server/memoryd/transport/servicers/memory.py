"""memoryd.v1.MemoryService: validate, call the domain, build the response."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from memoryd.domain import retention
from memoryd.domain.memory import Memory
from memoryd.domain.models import DEFAULT_RECENT_ROLES, ClearTarget, RecentQuery
from memoryd.domain.sessions import SessionFilter
from memoryd.transport.access import Gate, claimant
from memoryd.transport.convert import (
    attributes_from_proto,
    message_from_proto,
    message_head_to_proto,
    message_to_proto,
    messages_to_proto,
    session_to_proto,
)
from memoryd.transport.rpc import unary
from memoryd.transport.validation import Check
from memoryd.v1 import memory_service_pb2 as pb
from memoryd.v1 import memory_service_pb2_grpc as pb_grpc

CLEAR_TARGETS = [t.value for t in ClearTarget]


@dataclass(frozen=True, slots=True)
class RetentionInEffect:
    """The retention settings GetMemoryStats reports (config: session_retention_*, event_retention_*)."""

    sessions: retention.Settings = retention.Settings()
    event_max_age_seconds: int = 0
    event_max_count: int = 0


class MemoryServicer(pb_grpc.MemoryServiceServicer):
    def __init__(
        self, memory: Memory, auth: Gate, retention_in_effect: RetentionInEffect = RetentionInEffect()
    ) -> None:
        self.memory = memory
        self.auth = auth
        self.limits = memory.limits
        self.retention = retention_in_effect

    def _check(self, session_id: str | None = None) -> Check:
        check = Check(self.limits)
        if session_id is not None:
            check.name("session_id", session_id)
        return check

    @staticmethod
    def _claimant(context, request) -> str | None:
        """A user-bound caller's save makes a new session its user's (access.claimant)."""
        return claimant(context.caller, "session_attributes.user_id", request.session_attributes.user_id)

    @staticmethod
    def _attributes(check: Check, request):
        """A save's session_attributes, validated; None when the request carries none."""
        if not request.HasField("session_attributes"):
            return None
        check.session_attributes("session_attributes", request.session_attributes)
        return attributes_from_proto(request.session_attributes)

    @unary
    async def SaveMessage(self, request: pb.SaveMessageRequest, context, tenant: str) -> pb.SaveMessageResponse:
        check = self._check(request.session_id)
        if not request.HasField("message"):
            check.fail("message", "is required")
        else:
            check.message("message", request.message)
        check.name("idempotency_key", request.idempotency_key, required=False)
        attributes = self._attributes(check, request)
        check.done()
        result = await self.memory.save_messages(
            tenant,
            request.session_id,
            [message_from_proto(request.message)],
            request.idempotency_key,
            attributes,
            claimed_by=self._claimant(context, request),
        )
        response = pb.SaveMessageResponse(deduplicated=result.deduplicated, event_seq=result.event_seq)
        if self.memory.echoed(result.messages):
            message_to_proto(result.messages[0], response.message)
        else:
            message_head_to_proto(result.messages[0], response.message)
            response.body_omitted = True
        return response

    @unary
    async def SaveMessages(self, request: pb.SaveMessagesRequest, context, tenant: str) -> pb.SaveMessagesResponse:
        check = self._check(request.session_id)
        check.messages("messages", request.messages, minimum=1)
        check.name("idempotency_key", request.idempotency_key, required=False)
        attributes = self._attributes(check, request)
        check.done()
        result = await self.memory.save_messages(
            tenant,
            request.session_id,
            [message_from_proto(m) for m in request.messages],
            request.idempotency_key,
            attributes,
            claimed_by=self._claimant(context, request),
        )
        whole = self.memory.echoed(result.messages)
        response = pb.SaveMessagesResponse(
            deduplicated=result.deduplicated, omitted_bodies=len(result.messages) - whole, event_seq=result.event_seq
        )
        messages_to_proto(result.messages, response.messages, whole)
        return response

    @unary
    async def GetHistory(self, request: pb.GetHistoryRequest, context, tenant: str) -> pb.GetHistoryResponse:
        check = self._check(request.session_id)
        check.non_negative("limit", request.limit)
        check.done()
        messages, truncated = await self.memory.history_window(tenant, request.session_id, request.limit)
        response = pb.GetHistoryResponse(truncated=truncated)
        messages_to_proto(messages, response.messages)
        return response

    @unary
    async def GetFullHistory(
        self, request: pb.GetFullHistoryRequest, context, tenant: str
    ) -> pb.GetFullHistoryResponse:
        check = self._check(request.session_id)
        check.page_size("page_size", request.page_size)
        check.done()
        messages, token = await self.memory.get_full_history(
            tenant, request.session_id, request.page_size, request.page_token
        )
        response = pb.GetFullHistoryResponse(next_page_token=token)
        messages_to_proto(messages, response.messages)
        return response

    @unary
    async def ListMessagesInRange(
        self, request: pb.ListMessagesInRangeRequest, context, tenant: str
    ) -> pb.ListMessagesInRangeResponse:
        check = self._check(request.session_id)
        check.non_negative("from_ts", request.from_ts)
        if request.to_ts < request.from_ts:
            check.fail("to_ts", "must be >= from_ts")
        check.names("roles", request.roles)
        check.kinds("exclude_kinds", request.exclude_kinds)
        check.page_size("page_size", request.page_size)
        check.done()
        messages, token = await self.memory.list_in_range(
            tenant,
            request.session_id,
            request.from_ts,
            request.to_ts,
            list(request.roles),
            list(request.exclude_kinds),
            request.page_size,
            request.page_token,
        )
        response = pb.ListMessagesInRangeResponse(next_page_token=token)
        messages_to_proto(messages, response.messages)
        return response

    @unary
    async def GetRecentAcrossSessions(
        self, request: pb.GetRecentAcrossSessionsRequest, context, tenant: str
    ) -> pb.GetRecentAcrossSessionsResponse:
        check = self._check()
        check.positive("limit", request.limit)
        if request.HasField("since_ts"):
            check.non_negative("since_ts", request.since_ts)
        if request.HasField("platform"):
            check.name("platform", request.platform, required=False)
        check.names("exclude_session_ids", request.exclude_session_ids)
        check.names("roles", request.roles)
        check.kinds("kinds", request.kinds)
        check.kinds("exclude_kinds", request.exclude_kinds)
        check.done()
        query = RecentQuery(
            limit=request.limit,
            since_ts=request.since_ts if request.HasField("since_ts") else None,
            platform=request.platform if request.HasField("platform") else None,
            exclude_session_ids=tuple(request.exclude_session_ids),
            roles=tuple(request.roles) or DEFAULT_RECENT_ROLES,
            kinds=tuple(request.kinds),
            exclude_kinds=tuple(request.exclude_kinds),
            session_ids=await self.auth.user_sessions(context.caller),  # in the storage query
        )
        records, truncated = await self.memory.recent_window(tenant, query)
        response = pb.GetRecentAcrossSessionsResponse(truncated=truncated)
        for record in records:
            item = response.messages.add(session_id=record.session_id)
            message_to_proto(record.message, item.message)
        return response

    @unary
    async def TrimHistory(self, request: pb.TrimHistoryRequest, context, tenant: str) -> pb.TrimHistoryResponse:
        check = self._check(request.session_id)
        check.non_negative("keep_recent", request.keep_recent)
        check.done()
        archived = await self.memory.trim_history(tenant, request.session_id, request.keep_recent)
        return pb.TrimHistoryResponse(archived_count=archived)

    @unary
    async def ReplaceHistory(
        self, request: pb.ReplaceHistoryRequest, context, tenant: str
    ) -> pb.ReplaceHistoryResponse:
        check = self._check(request.session_id)
        check.messages("messages", request.messages, minimum=0)
        check.done()
        stored, removed = await self.memory.replace_history(
            tenant, request.session_id, [message_from_proto(m) for m in request.messages]
        )
        whole = self.memory.echoed(stored)
        response = pb.ReplaceHistoryResponse(
            removed_count=removed, omitted_bodies=len(stored) - whole, event_seq=await self.memory.position(tenant)
        )
        messages_to_proto(stored, response.messages, whole)
        return response

    @unary
    async def UpdateMessageContent(
        self, request: pb.UpdateMessageContentRequest, context, tenant: str
    ) -> pb.UpdateMessageContentResponse:
        check = self._check(request.session_id)
        if not request.old_text:
            check.fail("old_text", "must not be empty")
        check.text_bytes("old_text", request.old_text, self.limits.max_text_bytes)
        check.text_bytes("new_text", request.new_text, self.limits.max_text_bytes)
        check.non_negative("recent_limit", request.recent_limit)
        if request.recent_limit > self.limits.max_page_size:
            check.fail("recent_limit", f"must be at most {self.limits.max_page_size}")
        check.done()
        changed = await self.memory.update_message_content(
            tenant, request.session_id, request.old_text, request.new_text, request.recent_limit
        )
        return pb.UpdateMessageContentResponse(changed_count=changed, event_seq=await self.memory.position(tenant))

    @unary
    async def DeleteMessagesByTimestamps(
        self, request: pb.DeleteMessagesByTimestampsRequest, context, tenant: str
    ) -> pb.DeleteMessagesByTimestampsResponse:
        check = self._check(request.session_id)
        if check.count("timestamps", request.timestamps, self.limits.max_delete_items, minimum=1):
            for i, ts in enumerate(request.timestamps):
                check.non_negative(f"timestamps[{i}]", ts)
        check.done()
        deleted = await self.memory.delete_by_timestamps(tenant, request.session_id, list(request.timestamps))
        return pb.DeleteMessagesByTimestampsResponse(
            deleted_count=deleted, event_seq=await self.memory.position(tenant)
        )

    @unary
    async def DeleteMessages(
        self, request: pb.DeleteMessagesRequest, context, tenant: str
    ) -> pb.DeleteMessagesResponse:
        check = self._check(request.session_id)
        if check.count("ids", request.ids, self.limits.max_delete_items, minimum=1):
            for i, msg_id in enumerate(request.ids):
                check.name(f"ids[{i}]", msg_id)
        check.done()
        deleted = await self.memory.delete_by_ids(tenant, request.session_id, list(request.ids))
        return pb.DeleteMessagesResponse(deleted_count=deleted, event_seq=await self.memory.position(tenant))

    def _targets(self, check: Check, targets) -> list[ClearTarget]:
        check.enum("targets", targets, CLEAR_TARGETS + [pb.CLEAR_TARGET_UNSPECIFIED])
        return [ClearTarget(t) for t in targets if t in CLEAR_TARGETS]

    @unary
    async def ClearSession(self, request: pb.ClearSessionRequest, context, tenant: str) -> pb.ClearSessionResponse:
        check = self._check(request.session_id)
        targets = self._targets(check, request.targets)
        check.done()
        results = await self.memory.clear(tenant, request.session_id, targets)
        return pb.ClearSessionResponse(
            results=[_clear_result(r) for r in results], event_seq=await self.memory.position(tenant)
        )

    @unary
    async def ClearAll(self, request: pb.ClearAllRequest, context, tenant: str) -> pb.ClearAllResponse:
        check = self._check()
        targets = self._targets(check, request.targets)
        check.done()
        results = await self.memory.clear(tenant, None, targets)
        return pb.ClearAllResponse(
            results=[_clear_result(r) for r in results], event_seq=await self.memory.position(tenant)
        )

    @unary
    async def ListSessions(self, request: pb.ListSessionsRequest, context, tenant: str) -> pb.ListSessionsResponse:
        check = self._check()
        check.page_size("page_size", request.page_size)
        check.name("user_id", request.user_id, required=False)
        check.name("agent_id", request.agent_id, required=False)
        check.labels("labels", request.labels)
        since = request.active_since if request.HasField("active_since") else None
        before = request.active_before if request.HasField("active_before") else None
        if since is not None:
            check.non_negative("active_since", since)
        if before is not None:
            check.positive("active_before", before)
            if since is not None and before <= since:
                check.fail("active_before", "must be greater than active_since")
        check.done()
        user = context.caller.user_id
        if user is not None and request.user_id not in ("", user):  # another user's sessions: none of them is
            return pb.ListSessionsResponse()
        # A user-bound caller lists its user's sessions only: the owner filter of the sessions index.
        where = SessionFilter(user or request.user_id, request.agent_id, dict(request.labels), since, before)
        sessions, token = await self.memory.list_sessions(tenant, request.page_size, request.page_token, where)
        return pb.ListSessionsResponse(sessions=[session_to_proto(s) for s in sessions], next_page_token=token)

    @unary
    async def PopMessages(self, request: pb.PopMessagesRequest, context, tenant: str) -> pb.PopMessagesResponse:
        check = self._check(request.session_id)
        check.non_negative("n", request.n)
        if request.n > self.limits.max_page_size:
            check.fail("n", f"must be at most {self.limits.max_page_size}")
        check.done()
        popped, truncated = await self.memory.pop_messages(tenant, request.session_id, request.n)
        response = pb.PopMessagesResponse(truncated=truncated, event_seq=await self.memory.position(tenant))
        messages_to_proto(popped, response.messages)
        return response

    @unary
    async def GetSession(self, request: pb.GetSessionRequest, context, tenant: str) -> pb.GetSessionResponse:
        self._check(request.session_id).done()
        info = await self.memory.get_session(tenant, request.session_id)
        response = pb.GetSessionResponse(found=info is not None)
        if info is not None:
            session_to_proto(info, response.session)
        return response

    @unary
    async def UpdateSession(self, request: pb.UpdateSessionRequest, context, tenant: str) -> pb.UpdateSessionResponse:
        check = self._check(request.session_id)
        check.session_attributes("attributes", request.attributes)
        check.names("remove_labels", request.remove_labels)
        for i, key in enumerate(request.remove_labels):
            if key in request.attributes.labels:
                check.fail(f"remove_labels[{i}]", "is also set in attributes.labels")
        check.done()
        info = await self.memory.update_session(
            tenant,
            request.session_id,
            attributes_from_proto(request.attributes),
            list(request.remove_labels),
            claimed_by=claimant(context.caller, "attributes.user_id", request.attributes.user_id),
        )
        return pb.UpdateSessionResponse(session=session_to_proto(info))

    @unary
    async def ForgetUser(self, request: pb.ForgetUserRequest, context, tenant: str) -> pb.ForgetUserResponse:
        check = self._check()
        check.name("user_id", request.user_id)
        check.done()
        forgotten, vectors, event_seq = await self.memory.forget_user(tenant, request.user_id)
        return pb.ForgetUserResponse(
            sessions_forgotten=forgotten.sessions,
            messages_deleted=forgotten.messages,
            metadata_deleted=forgotten.metadata,
            entries_deleted=forgotten.entries,
            vectors=_clear_result(vectors),
            complete=forgotten.complete,
            event_seq=event_seq,
        )

    @unary
    async def GetCaller(self, request: pb.GetCallerRequest, context, tenant: str) -> pb.GetCallerResponse:
        caller = context.caller  # who the Gate admitted (rpc.CallerContext)
        return pb.GetCallerResponse(
            tenant=caller.tenant,
            scopes=sorted(caller.scopes),
            user_id=caller.user_id or "",
            authentication=self.auth.authenticator.enabled,
        )

    @unary
    async def GetMemoryStats(
        self, request: pb.GetMemoryStatsRequest, context, tenant: str
    ) -> pb.GetMemoryStatsResponse:
        totals = await self.memory.session_totals(tenant)
        policy = self.retention.sessions.policy(tenant)
        return pb.GetMemoryStatsResponse(
            sessions=totals.sessions,
            messages=totals.messages,
            unarchived_messages=totals.unarchived,
            session_retention=pb.SessionRetention(
                days=policy.days, action=policy.action.value, labelled_sessions=totals.labelled
            ),
            event_retention=pb.EventRetention(
                max_age_seconds=self.retention.event_max_age_seconds, max_events=self.retention.event_max_count
            ),
        )


def _clear_result(result) -> pb.ClearResult:
    return pb.ClearResult(
        target=cast(pb.ClearTarget, int(result.target)),
        outcome=cast(pb.ClearOutcome, int(result.outcome)),
        removed_count=result.removed_count,
        error=result.error,
    )
