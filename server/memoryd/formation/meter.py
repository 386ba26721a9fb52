"""Every formation model call goes through a `Meter`: per tenant, at most `concurrency` calls
at once and at most `token_budget` tokens per `budget_window_seconds` (0: no budget); a
429's Retry-After (or a spent budget) makes the tenant's next calls fail at once, without a
request, until then (the log consumer backs off; other tenants go on). It counts calls,
failures and tokens per tenant and strategy, and keeps the last failure's kind: what
GetFormationStatus reports (since the process started)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from memoryd.formation import llm


@dataclass(slots=True)
class Usage:
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    last_error: str = ""


@dataclass(slots=True)
class _Tenant:
    semaphore: asyncio.Semaphore
    window_start: float = 0.0
    window_tokens: int = 0
    blocked_until: float = 0.0
    usage: dict[str, Usage] = field(default_factory=dict)


class Meter:
    def __init__(
        self,
        model: llm.ChatModel,
        *,
        concurrency: int = 2,
        token_budget: int = 0,
        budget_window_seconds: float = 3600.0,
        clock=time.monotonic,
    ) -> None:
        self.model = model
        self.concurrency = max(1, concurrency)
        self.token_budget = token_budget
        self.window = budget_window_seconds
        self.clock = clock
        self._tenants: dict[str, _Tenant] = {}

    def _tenant(self, tenant: str) -> _Tenant:
        state = self._tenants.get(tenant)
        if state is None:
            state = self._tenants[tenant] = _Tenant(asyncio.Semaphore(self.concurrency), self.clock())
        return state

    def tenants(self) -> list[str]:
        """The tenants it has metered."""
        return list(self._tenants)

    def usage(self, tenant: str, strategy: str) -> Usage:
        return self._tenant(tenant).usage.setdefault(strategy, Usage())

    def tokens_left(self, tenant: str) -> int:
        if not self.token_budget:
            return -1
        state = self._tenant(tenant)
        if self.clock() - state.window_start >= self.window:
            return self.token_budget
        return max(0, self.token_budget - state.window_tokens)

    def succeeded(self, tenant: str, strategy: str) -> None:
        """A batch of the strategy was applied: its last error is cleared."""
        self.usage(tenant, strategy).last_error = ""

    async def complete(self, tenant: str, strategy: str, request: llm.ChatRequest) -> llm.ChatAnswer:
        state = self._tenant(tenant)
        usage = self.usage(tenant, strategy)
        now = self.clock()
        if now - state.window_start >= self.window:
            state.window_start, state.window_tokens = now, 0
        if state.blocked_until > now:
            usage.last_error = usage.last_error or llm.BACKING_OFF
            raise llm.LlmFailed(llm.BACKING_OFF, f"{state.blocked_until - now:.1f} s left")
        if self.token_budget and state.window_tokens >= self.token_budget:
            usage.last_error = llm.BUDGET
            raise llm.LlmFailed(llm.BUDGET, f"{self.token_budget} tokens per {self.window:.0f} s spent")
        async with state.semaphore:
            usage.calls += 1
            try:
                answer = await self.model.complete(request)
            except llm.LlmFailed as error:
                usage.failures += 1
                usage.last_error = error.kind
                self._spend(state, usage, error.prompt_tokens, error.completion_tokens)
                if error.retry_after:
                    state.blocked_until = max(state.blocked_until, self.clock() + error.retry_after)
                raise
            self._spend(state, usage, answer.prompt_tokens, answer.completion_tokens)
            return answer

    @staticmethod
    def _spend(state: _Tenant, usage: Usage, prompt: int, completion: int) -> None:
        usage.prompt_tokens += prompt
        usage.completion_tokens += completion
        state.window_tokens += prompt + completion

    async def close(self) -> None:
        await self.model.close()
