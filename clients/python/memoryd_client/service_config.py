"""The contract's gRPC service config: which RPCs gRPC retries, and how.

The document is `memoryd/v1/memoryd_grpc_service_config.json`, copied from
proto/memoryd/v1 by scripts/gen-proto (every language's client ships the same
one). It names every RPC of memoryd.v1 in one of two method configs: those
safe to run twice (reads, keyed appends, writes and deletes of named records)
carry a retry policy on UNAVAILABLE; the others carry none. docs/CLIENTS.md
explains the classification.
"""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

SERVICE_CONFIG_FILE = "memoryd_grpc_service_config.json"


def contract_service_config() -> dict[str, Any]:
    """The service config as shipped with the contract (a fresh copy)."""
    text = resources.files("memoryd.v1").joinpath(SERVICE_CONFIG_FILE).read_text(encoding="utf-8")
    return json.loads(text)


_CONTRACT = contract_service_config()


def retry_service_config(
    *,
    max_attempts: int | None = None,
    initial_backoff: float | None = None,
    max_backoff: float | None = None,
    backoff_multiplier: float | None = None,
) -> dict[str, Any]:
    """The contract's service config, with the retry policy's numbers overridden.

    Which RPCs are retried (and on which status codes) stays the contract's;
    only the attempts and backoff change. gRPC runs the retries inside the
    channel, with jittered exponential backoff, within each call's deadline.
    """
    config = copy.deepcopy(_CONTRACT)
    overrides = {
        "maxAttempts": max_attempts,
        "initialBackoff": None if initial_backoff is None else f"{initial_backoff}s",
        "maxBackoff": None if max_backoff is None else f"{max_backoff}s",
        "backoffMultiplier": backoff_multiplier,
    }
    for method_config in config["methodConfig"]:
        policy = method_config.get("retryPolicy")
        if policy is not None:
            policy.update({key: value for key, value in overrides.items() if value is not None})
    return config


def retried_methods(config: dict[str, Any]) -> set[str]:
    """'/package.Service/Method' paths that `config` gives a retry policy."""
    return {
        f"/{name['service']}/{name['method']}"
        for method_config in config["methodConfig"]
        if "retryPolicy" in method_config
        for name in method_config["name"]
    }


DEFAULT_RETRY = retry_service_config()
"""The service config the clients use unless told otherwise."""
