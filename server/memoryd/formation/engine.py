"""Formation as the server runs it: the three strategies as log consumers of one runtime of
their own (consumers/runtime.py: cursors, retries with backoff, leases, positions; a slow
model never holds up the recall index's consumer), the idle sweep of rolling summaries, and
what FormationService asks of it (facts, profiles, corrections, waits, status, settings).

Where the consumers run:
- on the embedded default (SQLite with the vector engine process), in the engine process
  (memoryd/engine.py builds a `Formation` there with `build(..., engine=True)`: the runtime,
  the model's HTTP client and the idle sweep live there); the serving process builds one with
  `link` (`remote`): it sees the strategies through their positions (consumers/remote.py),
  and the model calls and tokens the engine reports with them (`report`);
- elsewhere (MongoDB, a Qdrant server, vectors off), in the serving process, one process at a
  time per strategy by the runtime's lease.
Corrections and deletions (UpdateFact / DeleteFact) are written by the serving process in
either case: a guarded write of the fact's version, and every write of a fact by the
consumers is guarded on the version it read (records.py), so a caller's correction is never
undone by an extraction in another process.

Off (no model configured): nothing runs; stored facts and profiles stay readable and
deletable, waits and status say it is off.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memoryd import shutdown
from memoryd.consumers.remote import RemoteTrack, RuntimeLink
from memoryd.consumers.runtime import LogConsumer, Positions, Runtime
from memoryd.domain.errors import DeadlineExceeded, FailedPrecondition, NotFound, StorageUnavailable
from memoryd.domain.models import EventType, now_ms
from memoryd.domain.store import Store
from memoryd.domain.summaries import Summaries
from memoryd.formation import common, llm
from memoryd.formation import custom as custom_strategy
from memoryd.formation import facts as facts_strategy
from memoryd.formation import profile as profile_strategy
from memoryd.formation import summary as summary_strategy
from memoryd.formation.custom import CustomConsumer
from memoryd.formation.facts import MAX_FACT_CHARS, FactsConsumer, _keywords
from memoryd.formation.meter import Meter, Usage
from memoryd.formation.profile import ProfileConsumer
from memoryd.formation.records import Fact, FactRecords, Profile, memory_event
from memoryd.formation.settings import Settings, SettingsStore
from memoryd.formation.summary import SummaryConsumer

log = logging.getLogger(__name__)

STRATEGIES = ("summary", "facts", "profile", "custom")
# Each strategy's consumer (its cursor namespace): what a process where another one runs them
# follows (`remote`).
CONSUMER_NAMES = {
    "summary": summary_strategy.NAME,
    "facts": facts_strategy.NAME,
    "profile": profile_strategy.NAME,
    "custom": custom_strategy.NAME,
}
# While a WaitForFormation waits, the serving process reads the engine's positions this often
# (a model call takes far longer; the recall index's waiters, a search's, poll faster).
REMOTE_POLL_SECONDS = 0.1
# The model's key reaches the engine process in its environment, never on its command line.
LLM_KEY_ENV = "MEMORYD_ENGINE_LLM_API_KEY"
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


def build(config, store: Store, limits, *, link: RuntimeLink | None = None, engine: bool = False) -> Formation:
    """Formation as `config` (memoryd.config.Config) asks: on with --llm-url, else off.
    `link`: the engine process runs the consumers (a serving process of the embedded default
    follows them); `engine`: this is that engine process (one per data dir: no lease)."""
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
        lease=not engine,  # replicas and --workers: one process applies each strategy's logs
    )
    if not config.llm_url:
        return Formation(store, summaries, None, options)
    key = api_key(config)  # read at the start wherever it runs: a bad key file stops the start
    if not config.llm_model:
        raise ValueError("--llm-url needs --llm-model (the model name the endpoint serves)")
    if link is not None:
        return Formation(store, summaries, None, options, link=link, model_name=config.llm_model)
    model = OpenAIChat(config.llm_url, config.llm_model, key, timeout_seconds=config.llm_timeout_seconds)
    return Formation(store, summaries, model, options)


def api_key(config) -> str:
    """The model's bearer key: --llm-api-key-file's content, else MEMORYD_LLM_API_KEY."""
    if not config.llm_api_key_file:
        return config.llm_api_key
    try:
        with open(config.llm_api_key_file, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError as error:
        raise ValueError(f"--llm-api-key-file {config.llm_api_key_file}: {error.strerror}") from None


def engine_options(config) -> tuple[dict[str, Any], dict[str, str]]:
    """What the engine process needs of `config` to run formation (memoryd/engine.py): every
    llm_* and formation_* setting and the limits, as plain values, and the key as a secret
    (its environment: LLM_KEY_ENV). ({}, {}) when formation is off."""
    if not config.llm_url:
        return {}, {}
    settings = {
        f.name: getattr(config, f.name)
        for f in dataclasses.fields(config)
        if f.name.startswith(("llm_", "formation_")) and f.name not in ("llm_api_key", "llm_api_key_file")
    }
    settings["limits"] = dataclasses.asdict(config.limits)
    key = api_key(config)
    return settings, ({LLM_KEY_ENV: key} if key else {})


def off() -> FailedPrecondition:
    return FailedPrecondition(
        "memory formation is off on this server: start it with --llm-url (docs/MEMORY.md)", reason="FORMATION_OFF"
    )


class Formation:
    def __init__(
        self,
        store: Store,
        summaries: Summaries,
        model: llm.ChatModel | None,
        options: Options = Options(),
        *,
        link: RuntimeLink | None = None,
        model_name: str = "",
    ):
        """`model`: the consumers run here; `link` (no model): another process runs them (the
        engine process) and this one follows their positions over `link`; neither: off."""
        self.store = store
        self.options = options
        self.records = FactRecords(store)
        self.settings = SettingsStore(store, options.defaults)
        self.locks = common.Locks()
        self.model = model
        self.model_name = model.model if model is not None else model_name
        self.meter: Meter | None = None
        self.runtime: Runtime | None = None
        self.tracks: dict[str, Positions] = {}
        self.remote = link is not None and model is None
        self._tasks: list[asyncio.Task] = []
        self._started = False  # run() or start() was called: the runtime runs, or is about to
        if link is not None and model is None:

            def follow(strategy: str, leads: Sequence[RemoteTrack] = ()) -> RemoteTrack:
                return RemoteTrack(
                    link,
                    store,
                    CONSUMER_NAMES[strategy],
                    poll_seconds=options.poll_seconds,
                    linger_seconds=REMOTE_POLL_SECONDS,
                    wake_engine=False,  # the recall index's track forwards this process's commits
                    leads=leads,
                )

            # The first strategy's periodic look sets every strategy's positions.
            led = {strategy: follow(strategy) for strategy in STRATEGIES[1:]}
            self.tracks = {STRATEGIES[0]: follow(STRATEGIES[0], tuple(led.values())), **led}
            return
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
        return self.runtime is not None or self.remote

    def report(self, state: dict[str, Any]) -> None:
        """Add each strategy's model usage to a runtime snapshot (`state`, by consumer name:
        what the engine answers `runtime_state` with): {"usage": {tenant: Usage's fields},
        "tokens_left": {tenant: n}} as the consumer's "report" (RemoteTrack.report)."""
        if self.meter is None:
            return
        meter = self.meter
        tenants = meter.tenants()
        for strategy in STRATEGIES:
            entry = state.get(CONSUMER_NAMES[strategy])
            if entry is None:
                continue
            entry["report"] = {
                "usage": {t: dataclasses.astuple(meter.usage(t, strategy)) for t in tenants},
                "tokens_left": {t: meter.tokens_left(t) for t in tenants},
            }

    # -- lifecycle ---------------------------------------------------------------------
    async def run(self) -> None:
        """The server's background task: the consumers and the idle sweep until cancelled,
        then the cursors persisted and the leases handed on (`remote`: following the engine's
        positions)."""
        if self.remote:
            self._started = True
            await asyncio.gather(*(track.run() for track in self.tracks.values()))  # type: ignore[attr-defined]
            return
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
        if self._tasks:
            return
        if self.remote:
            self._started = True
            self._tasks = [asyncio.create_task(self.run(), name="formation-positions")]
            return
        if self.runtime is None:
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
        track = self.runtime.track(CONSUMER_NAMES["summary"])
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
    def require(self) -> None:
        if not self.enabled:
            raise off()

    async def wait(self, tenant: str, seq: int, timeout: float | None) -> list[StrategyStatus]:
        """Until every strategy has processed the tenant's log through `seq`, and the profile
        the fact events that processing wrote."""
        self.require()
        if not all(track.running for track in self.tracks.values()) and not self._started:
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

    def usage(self, tenant: str, strategy: str) -> Usage:
        """The model calls and tokens of the strategy for the tenant (since the process that runs
        the consumers started)."""
        if self.meter is not None:
            return self.meter.usage(tenant, strategy)
        track = self.tracks.get(strategy)
        values = track.report.get("usage", {}).get(tenant) if isinstance(track, RemoteTrack) else None
        return Usage(*values) if values else Usage()

    def status(self, tenant: str, latest: int) -> list[StrategyStatus]:
        out = []
        for strategy, track in self.tracks.items():
            state = track.status(tenant)
            usage = self.usage(tenant, strategy)
            position = state.position if state is not None else 0
            error = usage.last_error or (state.last_error if state is not None else "")
            out.append(StrategyStatus(strategy, position, max(latest, position), error, usage))
        return out

    def tokens_left(self, tenant: str) -> int:
        if self.meter is not None:
            return self.meter.tokens_left(tenant)
        if not self.remote or not self.options.token_budget:
            return -1
        track = self.tracks.get("facts")
        left = track.report.get("tokens_left", {}).get(tenant) if isinstance(track, RemoteTrack) else None
        return self.options.token_budget if left is None else int(left)
