"""What the strategies share: the tenant's formation lock, message rendering for prompts, and
keyword overlap for recalling related facts."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from memoryd.domain.models import Message
from memoryd.formation import llm

# Characters of one message shown to the model (the rest is cut).
MESSAGE_CHARS = 4000
PROMPT_ROLES = ("user", "assistant")
_WORD = re.compile(r"\w{3,}", re.UNICODE)


class Locks:
    """One asyncio lock per tenant: formation's writes of a tenant's facts and profiles (the
    consumers and the caller's UpdateFact/DeleteFact) never interleave in this process."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def __call__(self, tenant: str) -> asyncio.Lock:
        lock = self._locks.get(tenant)
        if lock is None:
            lock = self._locks[tenant] = asyncio.Lock()
        return lock


def message_chars(message: Message) -> int:
    return len(message.content) + sum(len(c.get("name", "")) + len(c.get("arguments", "")) for c in message.tool_calls)


def day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M") if ms > 0 else "unknown time"


def render(messages: Sequence[Message], numbered: bool = True) -> str:
    """Messages as prompt data: "M<n> [role, time]: text" (tool calls by name only)."""
    lines = []
    for n, message in enumerate(messages, 1):
        text = message.content
        if message.tool_calls:
            text += " [called tools: " + ", ".join(c.get("name", "") for c in message.tool_calls) + "]"
        label = f"M{n} " if numbered else ""
        lines.append(f"{label}[{message.role}, {day(message.timestamp)}]: {llm.clip(text, MESSAGE_CHARS)}")
    return llm.fence("\n".join(lines))


def words(texts: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        found.update(w.lower() for w in _WORD.findall(text))
    return found


def parse_date(value: str | None) -> int:
    """ms since the epoch (UTC) of an ISO date or date-time; 0 when absent or unreadable."""
    if not value:
        return 0
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return 0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    ms = int(parsed.timestamp() * 1000)
    return ms if 0 < ms < 32503680000000 else 0  # before the year 3000
