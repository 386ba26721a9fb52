"""Formation as the server runs it: the three strategies as log consumers of one runtime of
their own (consumers/runtime.py: cursors, retries with backoff, leases, positions; a slow
model never holds up the recall index's consumer), the idle sweep of rolling summaries, and
what FormationService asks of it (facts, profiles, corrections, waits, status, settings).

Off (no model configured): nothing runs; stored facts and profiles stay readable and
deletable, waits and status say it is off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from memoryd import shutdown
from memoryd.consumers.runtime import LogConsumer, Runtime, Track
from memoryd.domain.errors import DeadlineExceeded, FailedPrecondition, NotFound, StorageUnavailable
from memoryd.domain.models import EventType, now_ms
from memoryd.domain.store import Store
from memoryd.domain.summaries import Summaries
from memoryd.formation import common, llm
from memoryd.formation.custom import CustomConsumer
from memoryd.formation.facts import MAX_FACT_CHARS, FactsConsumer, _keywords
from memoryd.formation.meter import Meter, Usage
from memoryd.formation.profile import ProfileConsumer
from memoryd.formation.records import Fact, FactRecords, Profile, memory_event
from memoryd.formation.settings import Settings, SettingsStore
from memoryd.formation.summary import SummaryConsumer

log = logging.getLogger(__name__)

STRATEGIES = ("summary", "facts", "profile", "custom")
SWEEP_SECONDS = 60.0
DEFAULT_WAIT_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class StrategyStatus:
    strategy: str
    position: int
    latest: int
    last_error: str
    usage: Usage

    @property
    def lag(self) -> int:
        return max(0, self.latest - self.position)


@dataclass(frozen=True, slots=True)
class Options:
    defaults: Settings = Settings()
    concurrency: int = 2
    token_budget: int = 0
    budget_window_seconds: float = 3600.0
    lease: bool = False
    poll_seconds: float = 1.0
    linger_seconds: float = 1.0  # a stream of writes makes batches: fewer, larger model calls
    # A burst of writes is served first: formation waits until local commits pause this long,
    # at most defer_seconds (WaitForFormation starts it at once).
    quiet_seconds: float = 0.5
    defer_seconds: float = 10.0
    min_backoff_seconds: float = 0.5
    max_backoff_seconds: float = 60.0
    sweep_seconds: float = SWEEP_SECONDS


def build(config, store: Store, limits) -> Formation:
    """Formation as `config` (memoryd.config.Config) asks: on with --llm-url, else off."""
    from memoryd.formation.openai_chat import OpenAIChat  # the SDK only where it is used

    summaries = Summaries(store, limits)
    defaults = Settings(
        summary_max_messages=config.formation_summary_max_messages,
        summary_max_chars=config.formation_summary_max_chars,
        summary_idle_seconds=config.formation_summary_idle_seconds,
        profile_max_chars=config.formation_profile_max_chars,
    )
    options = Options(
        defaults=defaults,
        concurrency=config.formation_concurrency,
        token_budget=config.formation_token_budget,
        lease=True,  # replicas and --workers: one process applies each strategy's logs
    )
    if not config.llm_url:
        return Formation(store, summaries, None, options)
    key = config.llm_api_key
    if config.llm_api_key_file:
        try:
            with open(config.llm_api_key_file, encoding="utf-8") as handle:
                key = handle.read().strip()
        except OSError as error:
            raise ValueError(f"--llm-api-key-file {config.llm_api_key_file}: {error.strerror}") from None
    if not config.llm_model:
        raise ValueError("--llm-url needs --llm-model (the model name the endpoint serves)")
    model = OpenAIChat(config.llm_url, config.llm_model, key, timeout_seconds=config.llm_timeout_seconds)
    return Formation(store, summaries, model, options)


def off() -> FailedPrecondition:
    return FailedPrecondition(
        "memory formation is off on this server: start it with --llm-url (docs/MEMORY.md)", reason="FORMATION_OFF"
    )


class Formation:
    def __init__(self, store: Store, summaries: Summaries, model: llm.ChatModel | None, options: Options = Options()):
        self.store = store
        self.options = options
        self.records = FactRecords(store)
        self.settings = SettingsStore(store, options.defaults)
        self.locks = common.Locks()
        self.model = model
        self.meter: Meter | None = None
        self.runtime: Runtime | None = None
        self.tracks: dict[str, Track] = {}
        self._tasks: list[asyncio.Task] = []
        self._started = False  # run() or start() was called: the runtime runs, or is about to
        if model is None:
            return
        self.meter = Meter(
            model,
            concurrency=options.concurrency,
            token_budget=options.token_budget,
            budget_window_seconds=options.budget_window_seconds,
        )
        self.summary = SummaryConsumer(store, summaries, self.meter, self.settings)
        self.facts = FactsConsumer(store, self.meter, self.settings, self.locks)
        self.profile = ProfileConsumer(store, self.meter, self.settings, self.locks)
        self.custom = CustomConsumer(store, self.meter, self.settings, self.locks)
        self.runtime = Runtime(
            store,
            poll_seconds=options.poll_seconds,
            linger_seconds=options.linger_seconds,
            quiet_seconds=options.quiet_seconds,
            defer_seconds=options.defer_seconds,
            min_backoff_seconds=options.min_backoff_seconds,
            max_backoff_seconds=options.max_backoff_seconds,
            lease=options.lease,
        )
        consumers: tuple[LogConsumer, ...] = (self.summary, self.facts, self.profile, self.custom)
        for strategy, consumer in zip(STRATEGIES, consumers, strict=True):
            self.tracks[strategy] = self.runtime.add(consumer)

    @property
    def enabled(self) -> bool:
        return self.runtime is not None

    # -- lifecycle ---------------------------------------------------------------------
    async def run(self) -> None:
        """The server's background task: the consumers and the idle sweep until cancelled,
        then the cursors persisted and the leases handed on."""
        if self.runtime is None:
            return
        self._started = True
        try:
            await asyncio.gather(self.runtime.run(), self._sweeps())
        finally:
            with contextlib.suppress(Exception):
                await self.runtime.close()
            if self.meter is not None:
                with contextlib.suppress(Exception):
                    await self.meter.close()

    def start(self) -> None:
        if self.runtime is None or self._tasks:
            return
        self._started = True
        self._tasks = [
            asyncio.create_task(self.runtime.run(), name="formation-runtime"),
            asyncio.create_task(self._sweeps(), name="formation-idle-sweep"),
        ]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        if self.runtime is not None:
            await self.runtime.close()
        if self.meter is not None:
            await self.meter.close()

    async def _sweeps(self) -> None:
        """Every sweep_seconds: summarize the tails of idle sessions (held by the summary
        consumer's lease holder only, when several processes share the store)."""
        while True:
            await asyncio.sleep(self.options.sweep_seconds)
            shutdown.raise_if_cancelled()
            try:
                await self.sweep()
            except Exception as error:  # noqa: BLE001 - the next sweep tries again
                log.info("formation: idle sweep failed (%s)", getattr(error, "reason", type(error).__name__))

    async def sweep(self) -> int:
        if self.runtime is None:
            return 0
        track = self.tracks["summary"]
        if track.lease is not None and not track.lease.held:
            return 0
        idle = self.options.defaults.summary_idle_seconds
        saved = 0
        for tenant in await self.runtime.tenant_logs():
            saved += await self.summary.sweep(tenant, now_ms(), idle or 1800)
        return saved

    # -- facts and profiles ------------------------------------------------------------
    async def list_facts(
        self, tenant: str, user_id: str, session_id: str, include_superseded: bool, size: int, after: str | None
    ) -> tuple[list[Fact], str | None]:
        return await self.records.page(
            tenant, user_id, after, size, session_id=session_id, include_superseded=include_superseded
        )

    async def get_profile(self, tenant: str, user_id: str) -> Profile | None:
        return await self.records.profile(tenant, user_id)

    async def update_fact(
        self,
        tenant: str,
        user_id: str,
        fact_id: str,
        text: str,
        category: str,
        keywords: Sequence[str],
        event_time: int,
    ) -> Fact:
        async with self.locks(tenant):
            before = await self.records.get(tenant, user_id, fact_id)
            if before is None:
                raise NotFound(f"user {user_id!r} has no fact {fact_id!r}")
            now = now_ms()
            after = before.changed(
                now,
                text=llm.clip(" ".join(text.split()), MAX_FACT_CHARS),
                category=category or before.category,
                keywords=_keywords(keywords) if keywords else before.keywords,
                event_time=event_time or before.event_time,
                corrected=True,
            )
            event = memory_event(EventType.MEMORY_FORMED, "fact", fact_id, user_id, reason="caller")
            if not await self.records.commit_fact(tenant, before, after, [event], now):
                raise StorageUnavailable("the fact changed during the call; retry", reason="FORMATION_UNAVAILABLE")
            return after

    async def delete_fact(self, tenant: str, user_id: str, fact_id: str) -> bool:
        async with self.locks(tenant):
            before = await self.records.get(tenant, user_id, fact_id)
            if before is None:
                return False
            event = memory_event(EventType.MEMORY_REMOVED, "fact", fact_id, user_id, reason="caller")
            return await self.records.commit_fact(tenant, before, None, [event], now_ms())

    # -- positions -----------------------------------------------------------------------
    def require(self) -> Runtime:
        if self.runtime is None:
            raise off()
        return self.runtime

    async def wait(self, tenant: str, seq: int, timeout: float | None) -> list[StrategyStatus]:
        """Until every strategy has processed the tenant's log through `seq`, and the profile
        the fact events that processing wrote."""
        runtime = self.require()
        if not runtime.running and not self._started:
            raise StorageUnavailable(
                "memory formation is not running in this process (starting or stopping)", reason="FORMATION_UNAVAILABLE"
            )
        loop = asyncio.get_running_loop()
        end = loop.time() + (timeout if timeout is not None else DEFAULT_WAIT_SECONDS)
        try:
            # asyncio.timeout, not wait_for (tests/test_source_rules.py says why).
            async with asyncio.timeout_at(end):
                for strategy in ("summary", "facts", "custom"):
                    await self.tracks[strategy].wait_for(tenant, seq)
                formed = (await self.store.event_bounds(tenant))[1]
                await self.tracks["profile"].wait_for(tenant, max(seq, formed))
        except TimeoutError:
            statuses = self.status(tenant, (await self.store.event_bounds(tenant))[1])
            metadata = {"event_seq": str(seq)}
            for s in statuses:
                metadata[f"{s.strategy}_position"] = str(s.position)
                if s.last_error:
                    metadata[f"{s.strategy}_last_error"] = s.last_error
            raise DeadlineExceeded(
                f"memory formation has not processed event {seq} yet", reason="FORMATION_LAGGING", metadata=metadata
            ) from None
        return self.status(tenant, (await self.store.event_bounds(tenant))[1])

    def status(self, tenant: str, latest: int) -> list[StrategyStatus]:
        out = []
        for strategy, track in self.tracks.items():
            state = track.status(tenant)
            assert self.meter is not None
            usage = self.meter.usage(tenant, strategy)
            position = state.position if state is not None else 0
            error = usage.last_error or (state.last_error if state is not None else "")
            out.append(StrategyStatus(strategy, position, max(latest, position), error, usage))
        return out

    def tokens_left(self, tenant: str) -> int:
        return self.meter.tokens_left(tenant) if self.meter is not None else -1
