"""Formation settings: the server's defaults, overridden per tenant, then per session, field by
field (memoryd.v1.FormationSettings). Stored as metadata records of the tenant:

    namespace "memoryd.formation-settings", key "tenant" or "session/<session id>"

holding only the fields set (unset inherits). `custom_strategies`, when set, is the whole list
(a session's list replaces its tenant's, which replaces the default: none); each strategy's
JSON schema is checked when it is set (`problems`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields, replace
from typing import Any

import jsonschema

from memoryd.domain.models import now_ms
from memoryd.domain.store import Store

NAMESPACE = "memoryd.formation-settings"
TENANT_KEY = "tenant"
MAX_SUMMARY_MESSAGES = 50
MIN_PROFILE_CHARS, MAX_PROFILE_CHARS = 100, 8000
MAX_CUSTOM_STRATEGIES = 8
MAX_PROMPT_CHARS = 4000
MAX_SCHEMA_BYTES = 16_384
MAX_SCHEMA_DEPTH = 16
STRATEGY_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
# Keywords that name or reach other schemas: a strategy's schema stands alone.
_REFUSED_KEYWORDS = ("$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor")


def session_key(session_id: str) -> str:
    return "session/" + session_id


@dataclass(frozen=True, slots=True)
class CustomStrategy:
    """A caller's strategy (memoryd.v1.CustomStrategy): its instruction and the JSON schema of
    one record's value, as JSON text (checked by `problems` before it is stored)."""

    name: str
    prompt: str
    json_schema: str
    enabled: bool = True

    @property
    def schema(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.json_schema)
        return loaded

    def record(self) -> dict[str, Any]:
        return {"name": self.name, "prompt": self.prompt, "json_schema": self.json_schema, "enabled": self.enabled}

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> CustomStrategy:
        return cls(data["name"], data["prompt"], data["json_schema"], bool(data.get("enabled")))


@dataclass(frozen=True, slots=True)
class Settings:
    summary_enabled: bool = True
    summary_max_messages: int = MAX_SUMMARY_MESSAGES
    summary_max_chars: int = 20_000
    summary_idle_seconds: int = 1800
    facts_enabled: bool = True
    profile_enabled: bool = True
    profile_max_chars: int = 2000
    custom_strategies: tuple[CustomStrategy, ...] = ()

    def overridden(self, stored: dict[str, Any] | None) -> Settings:
        if not stored:
            return self
        known = {f.name for f in fields(self)}
        values = {k: v for k, v in stored.items() if k in known and v is not None}
        if "custom_strategies" in values:
            values["custom_strategies"] = tuple(CustomStrategy.from_record(c) for c in values["custom_strategies"])
        return replace(self, **values)

    def fingerprint(self) -> str:
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))


def problems(stored: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, what is wrong) of stored settings; empty when they are valid."""
    found = []
    n = stored.get("summary_max_messages")
    if n is not None and not 1 <= n <= MAX_SUMMARY_MESSAGES:
        found.append(("summary_max_messages", f"must be between 1 and {MAX_SUMMARY_MESSAGES}"))
    c = stored.get("summary_max_chars")
    if c is not None and not 100 <= c <= 1_000_000:
        found.append(("summary_max_chars", "must be between 100 and 1,000,000"))
    idle = stored.get("summary_idle_seconds")
    if idle is not None and not 0 <= idle <= 30 * 86400:
        found.append(("summary_idle_seconds", "must be between 0 and 2,592,000"))
    p = stored.get("profile_max_chars")
    if p is not None and not MIN_PROFILE_CHARS <= p <= MAX_PROFILE_CHARS:
        found.append(("profile_max_chars", f"must be between {MIN_PROFILE_CHARS} and {MAX_PROFILE_CHARS}"))
    for field, problem in custom_problems(stored.get("custom_strategies")):
        found.append((field, problem))
    return found


def custom_problems(strategies: list[dict[str, Any]] | None) -> list[tuple[str, str]]:
    """(field under custom_strategies, what is wrong) of a list of strategy records."""
    if strategies is None:
        return []
    if len(strategies) > MAX_CUSTOM_STRATEGIES:
        return [("custom_strategies.strategies", f"must hold at most {MAX_CUSTOM_STRATEGIES} strategies")]
    found = []
    seen: set[str] = set()
    for i, strategy in enumerate(strategies):
        at = f"custom_strategies.strategies[{i}]"
        name = strategy.get("name", "")
        if problem := name_problem(name):
            found.append((f"{at}.name", problem))
        elif name in seen:
            found.append((f"{at}.name", f"names {name!r} twice"))
        seen.add(name)
        prompt = strategy.get("prompt", "")
        if not prompt.strip() or len(prompt) > MAX_PROMPT_CHARS:
            found.append((f"{at}.prompt", f"must be 1-{MAX_PROMPT_CHARS} characters, not blank"))
        problem = schema_problem(strategy.get("json_schema", ""))
        if problem:
            found.append((f"{at}.json_schema", problem))
    return found


def name_problem(name: str) -> str | None:
    """What is wrong with a custom strategy's name (in settings, or naming one in a request);
    None when it is one."""
    if STRATEGY_NAME.fullmatch(name):
        return None
    return "must be 1-64 characters: a lowercase letter, then lowercase letters, digits or _"


def schema_problem(text: str) -> str | None:
    """What is wrong with a strategy's JSON schema text; None when it can be used."""
    if len(text.encode()) > MAX_SCHEMA_BYTES:
        return f"must be at most {MAX_SCHEMA_BYTES} bytes"
    try:
        schema = json.loads(text)
    except ValueError:
        return "must be JSON text"
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return 'must be a JSON Schema object with "type": "object" at its root'
    problem = _walk(schema, 1)
    if problem:
        return problem
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"is not a valid JSON Schema (draft 2020-12) at {where}: {error.message[:200]}"
    return None


def _walk(node: Any, depth: int) -> str | None:
    if depth > MAX_SCHEMA_DEPTH:
        return f"must be nested at most {MAX_SCHEMA_DEPTH} levels"
    if isinstance(node, list):
        return next((p for p in (_walk(v, depth + 1) for v in node) if p), None)
    if not isinstance(node, dict):
        return None
    for keyword in _REFUSED_KEYWORDS:
        if keyword in node:
            return f"must not use {keyword} (the schema stands alone)"
    ref = node.get("$ref")
    if ref is not None and not (isinstance(ref, str) and ref.startswith("#/$defs/")):
        return 'may use $ref only into its own $defs ("#/$defs/...")'
    return next((p for p in (_walk(v, depth + 1) for v in node.values()) if p), None)


class SettingsStore:
    def __init__(self, store: Store, defaults: Settings) -> None:
        self.store = store
        self.defaults = defaults

    async def stored(self, tenant: str, session_id: str = "") -> dict[str, Any]:
        key = session_key(session_id) if session_id else TENANT_KEY
        entry = await self.store.get_metadata(tenant, NAMESPACE, key)
        return dict(entry.data) if entry else {}

    async def effective(self, tenant: str, session_id: str = "") -> Settings:
        settings = self.defaults.overridden(await self.stored(tenant))
        if session_id:
            settings = settings.overridden(await self.stored(tenant, session_id))
        return settings

    async def save(self, tenant: str, session_id: str, stored: dict[str, Any]) -> Settings:
        key = session_key(session_id) if session_id else TENANT_KEY
        values = {k: v for k, v in stored.items() if v is not None}
        if values:
            await self.store.save_metadata(tenant, NAMESPACE, key, values, now_ms())
        else:
            await self.store.delete_metadata(tenant, NAMESPACE, key, now_ms())
        return await self.effective(tenant, session_id)
