"""memoryd.v1.FormationService: formed facts and profiles, corrections, waits, status and
settings (docs/MEMORY.md). The domain is formation/engine.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from memoryd.domain.errors import PermissionDenied
from memoryd.domain.paging import PageTokens
from memoryd.formation import settings as fs
from memoryd.formation.custom import delete_record
from memoryd.formation.engine import Formation, off
from memoryd.formation.facts import CATEGORIES, MAX_FACT_CHARS, MAX_KEYWORD_CHARS, MAX_KEYWORDS
from memoryd.formation.records import CustomRecord, CustomRecords, Fact, Profile
from memoryd.transport.access import Gate
from memoryd.transport.rpc import unary
from memoryd.transport.validation import Check
from memoryd.v1 import formation_service_pb2 as pb
from memoryd.v1 import formation_service_pb2_grpc as pb_grpc

DEFAULT_PAGE = 100
MAX_WAIT_MS = 10 * 60 * 1000
STRATEGIES = {
    "summary": pb.FORMATION_STRATEGY_SUMMARY,
    "facts": pb.FORMATION_STRATEGY_FACTS,
    "profile": pb.FORMATION_STRATEGY_PROFILE,
    "custom": pb.FORMATION_STRATEGY_CUSTOM,
}
CUSTOM = "custom_strategies"
# The scalar settings (custom_strategies, a message, is read and written on its own).
T = TypeVar("T")
SETTING_FIELDS = tuple(f.name for f in pb.FormationSettings.DESCRIPTOR.fields if f.name != CUSTOM)


def sourced_to_proto(record: Fact | CustomRecord, target: pb.Fact | pb.CustomRecord) -> None:
    """What facts and custom records share: id, user, provenance and times."""
    target.id = record.id
    target.user_id = record.user_id
    for source in record.sources:
        target.sources.add(session_id=source.session_id, message_id=source.message_id, seq=source.seq)
    target.create_time = record.create_time
    target.update_time = record.update_time


def fact_to_proto(fact: Fact, target: pb.Fact) -> None:
    sourced_to_proto(fact, target)
    target.text = fact.text
    target.category = fact.category
    target.event_time = fact.event_time
    target.keywords.extend(fact.keywords)
    target.valid_to = fact.valid_to
    target.superseded_by = fact.superseded_by
    target.corrected = fact.corrected


def profile_to_proto(profile: Profile, target: pb.UserProfile) -> None:
    target.user_id = profile.user_id
    target.text = profile.text
    target.fact_ids.extend(profile.fact_ids)
    target.update_time = profile.update_time


def custom_record_to_proto(record: CustomRecord, target: pb.CustomRecord) -> None:
    sourced_to_proto(record, target)
    target.strategy = record.strategy
    target.value.update(record.value)


def settings_to_proto(values: dict, target: pb.FormationSettings) -> None:
    for name in SETTING_FIELDS:
        if values.get(name) is not None:
            setattr(target, name, values[name])
    if values.get(CUSTOM) is not None:
        target.custom_strategies.SetInParent()  # set, even when empty
        for strategy in values[CUSTOM]:
            target.custom_strategies.strategies.add(**strategy)


def effective_to_proto(effective: fs.Settings, target: pb.FormationSettings) -> None:
    values = {n: getattr(effective, n) for n in SETTING_FIELDS}
    values[CUSTOM] = [s.record() for s in effective.custom_strategies]
    settings_to_proto(values, target)


def settings_from_proto(settings: pb.FormationSettings) -> dict:
    """The fields set, as stored (custom strategies as records)."""
    values: dict = {n: getattr(settings, n) for n in SETTING_FIELDS if settings.HasField(n)}
    if settings.HasField(CUSTOM):
        values[CUSTOM] = [
            {"name": s.name, "prompt": s.prompt, "json_schema": s.json_schema, "enabled": s.enabled}
            for s in settings.custom_strategies.strategies
        ]
    return values


class FormationServicer(pb_grpc.FormationServiceServicer):
    def __init__(self, formation: Formation, auth: Gate, page_tokens: PageTokens, limits) -> None:
        self.formation = formation
        self.auth = auth
        self.page_tokens = page_tokens
        self.limits = limits
        self.custom_records = CustomRecords(formation.store)

    def _user(self, context, user_id: str) -> Check:
        """A check with the user named; a token bound to an end user may name only its own."""
        check = Check(self.limits)
        check.name("user_id", user_id)
        caller = context.caller.user_id
        if caller is not None and user_id and user_id != caller:
            raise PermissionDenied(
                "a token bound to an end user reads and changes only that user's formed memory",
                reason="USER_ACCESS_DENIED",
                metadata={"field": "user_id"},
            )
        return check

    async def _paged(
        self,
        tenant: str,
        scope: tuple,
        page_token: str,
        page: Callable[[str | None], Awaitable[tuple[list[T], str | None]]],
    ) -> tuple[list[T], str]:
        """One page after the position `page_token` holds (bound to `scope`), and the token of
        the next page ("" on the last)."""
        position = await self.page_tokens.decode(tenant, scope, page_token)
        items, after = await page(position["after"] if position else None)
        return items, await self.page_tokens.encode(tenant, scope, {"after": after}) if after is not None else ""

    @unary
    async def ListFacts(self, request: pb.ListFactsRequest, context, tenant: str) -> pb.ListFactsResponse:
        check = self._user(context, request.user_id)
        check.name("session_id", request.session_id, required=False)
        check.page_size("page_size", request.page_size)
        check.done()
        size = min(request.page_size or DEFAULT_PAGE, self.limits.max_page_size)
        scope = ("facts", request.user_id, request.session_id, request.include_superseded)

        async def page(after: str | None) -> tuple[list[Fact], str | None]:
            return await self.formation.list_facts(
                tenant, request.user_id, request.session_id, request.include_superseded, size, after
            )

        facts, token = await self._paged(tenant, scope, request.page_token, page)
        response = pb.ListFactsResponse(next_page_token=token)
        for fact in facts:
            fact_to_proto(fact, response.facts.add())
        return response

    @unary
    async def GetProfile(self, request: pb.GetProfileRequest, context, tenant: str) -> pb.GetProfileResponse:
        self._user(context, request.user_id).done()
        response = pb.GetProfileResponse()
        profile = await self.formation.get_profile(tenant, request.user_id)
        if profile is not None:
            profile_to_proto(profile, response.profile)
        return response

    @unary
    async def UpdateFact(self, request: pb.UpdateFactRequest, context, tenant: str) -> pb.UpdateFactResponse:
        check = self._user(context, request.user_id)
        check.name("fact_id", request.fact_id)
        text = " ".join(request.text.split())
        if not text:
            check.fail("text", "must not be blank")
        elif len(text) > MAX_FACT_CHARS:
            check.fail("text", f"must be at most {MAX_FACT_CHARS} characters")
        if request.category and request.category not in CATEGORIES:
            check.fail("category", "must be one of " + ", ".join(CATEGORIES))
        if check.count("keywords", request.keywords, MAX_KEYWORDS):
            for i, keyword in enumerate(request.keywords):
                if not keyword.strip() or len(keyword) > MAX_KEYWORD_CHARS:
                    check.fail(f"keywords[{i}]", f"must be 1-{MAX_KEYWORD_CHARS} characters")
        check.non_negative("event_time", request.event_time)
        check.done()
        fact = await self.formation.update_fact(
            tenant, request.user_id, request.fact_id, text, request.category, list(request.keywords), request.event_time
        )
        response = pb.UpdateFactResponse()
        fact_to_proto(fact, response.fact)
        return response

    @unary
    async def DeleteFact(self, request: pb.DeleteFactRequest, context, tenant: str) -> pb.DeleteFactResponse:
        check = self._user(context, request.user_id)
        check.name("fact_id", request.fact_id)
        check.done()
        return pb.DeleteFactResponse(deleted=await self.formation.delete_fact(tenant, request.user_id, request.fact_id))

    @unary
    async def WaitForFormation(
        self, request: pb.WaitForFormationRequest, context, tenant: str
    ) -> pb.WaitForFormationResponse:
        check = Check(self.limits)
        check.non_negative("event_seq", request.event_seq)
        check.non_negative("timeout_ms", request.timeout_ms)
        if request.timeout_ms > MAX_WAIT_MS:
            check.fail("timeout_ms", f"must be at most {MAX_WAIT_MS}")
        check.done()
        timeout = request.timeout_ms / 1000 if request.timeout_ms else None
        remaining = context.time_remaining() if hasattr(context, "time_remaining") else None
        if remaining is not None:  # end before the call's own deadline, so the answer still goes out
            timeout = min(timeout if timeout is not None else remaining, max(0.0, remaining - 0.05))
        statuses = await self.formation.wait(tenant, request.event_seq, timeout)
        response = pb.WaitForFormationResponse()
        for status in statuses:
            self._status(status, response.strategies.add())
        return response

    @staticmethod
    def _status(status, target: pb.StrategyStatus) -> None:
        target.strategy = STRATEGIES[status.strategy]
        target.position = status.position
        target.latest = status.latest
        target.lag = status.lag
        target.last_error = status.last_error
        target.llm_calls = status.usage.calls
        target.llm_failures = status.usage.failures
        target.prompt_tokens = status.usage.prompt_tokens
        target.completion_tokens = status.usage.completion_tokens

    @unary
    async def GetFormationStatus(
        self, request: pb.GetFormationStatusRequest, context, tenant: str
    ) -> pb.GetFormationStatusResponse:
        formation = self.formation
        if not formation.enabled:
            return pb.GetFormationStatusResponse(enabled=False, tokens_left=-1)
        latest = (await formation.store.event_bounds(tenant))[1]
        response = pb.GetFormationStatusResponse(
            enabled=True,
            model=formation.model_name,
            tokens_left=formation.tokens_left(tenant),
        )
        for status in formation.status(tenant, latest):
            self._status(status, response.strategies.add())
        return response

    @unary
    async def GetFormationSettings(
        self, request: pb.GetFormationSettingsRequest, context, tenant: str
    ) -> pb.GetFormationSettingsResponse:
        check = Check(self.limits)
        check.name("session_id", request.session_id, required=False)
        check.done()
        response = pb.GetFormationSettingsResponse()
        settings_to_proto(await self.formation.settings.stored(tenant, request.session_id), response.stored)
        effective_to_proto(await self.formation.settings.effective(tenant, request.session_id), response.effective)
        return response

    @unary
    async def SetFormationSettings(
        self, request: pb.SetFormationSettingsRequest, context, tenant: str
    ) -> pb.SetFormationSettingsResponse:
        check = Check(self.limits)
        check.name("session_id", request.session_id, required=False)
        values = settings_from_proto(request.settings)
        for name, problem in fs.problems(values):
            check.fail(f"settings.{name}", problem)
        check.done()
        if not self.formation.enabled:
            raise off()
        effective = await self.formation.settings.save(tenant, request.session_id, values)
        response = pb.SetFormationSettingsResponse()
        effective_to_proto(effective, response.effective)
        return response

    @unary
    async def ListCustomRecords(
        self, request: pb.ListCustomRecordsRequest, context, tenant: str
    ) -> pb.ListCustomRecordsResponse:
        check = self._user(context, request.user_id)
        if request.strategy and (problem := fs.name_problem(request.strategy)):
            check.fail("strategy", problem)
        check.name("session_id", request.session_id, required=False)
        check.page_size("page_size", request.page_size)
        check.done()
        size = min(request.page_size or DEFAULT_PAGE, self.limits.max_page_size)
        scope = ("custom", request.user_id, request.strategy, request.session_id)

        async def page(after: str | None) -> tuple[list[CustomRecord], str | None]:
            return await self.custom_records.listed(
                tenant, request.user_id, after, size, strategy=request.strategy, session_id=request.session_id
            )

        records, token = await self._paged(tenant, scope, request.page_token, page)
        response = pb.ListCustomRecordsResponse(next_page_token=token)
        for record in records:
            custom_record_to_proto(record, response.records.add())
        return response

    @unary
    async def DeleteCustomRecord(
        self, request: pb.DeleteCustomRecordRequest, context, tenant: str
    ) -> pb.DeleteCustomRecordResponse:
        check = self._user(context, request.user_id)
        check.name("record_id", request.record_id)
        check.done()
        deleted = await delete_record(
            self.custom_records, self.formation.locks, tenant, request.user_id, request.record_id
        )
        return pb.DeleteCustomRecordResponse(deleted=deleted)
