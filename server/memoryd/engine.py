"""The embedded engine process: Qdrant Edge's index and the data dir's log consumers.

On the embedded default (SQLite + Qdrant Edge in its own process) the engine process is
`python -m memoryd.engine <the arguments of storage/qdrant/edge_process.py>`: the engine of
edge_process.py (the index, answering the serving processes' calls), and beside it, once the
index is open, the log consumers over the data dir's SQLite file (`run_consumers`): the
recall index's (vectors/sync.py), on a consumer runtime (consumers/runtime.py) of its own,
and, with --llm-url, memory formation's strategies (formation/engine.py) on another runtime
(a slow model never holds up the index), with the model's HTTP client and the idle sweep of
rolling summaries. Reading messages, tokenizing, BM25, embedder and model calls and point
building happen here, never in a serving process. There is one engine per data dir (its
folder lock), so no lease; a killed engine is started again by the serving process's next
call, and its consumers go on from their persisted cursors.

A serving process sees the consumers only through their positions: `runtime_state` (every
runtime's snapshot, formation's with its model usage) and `runtime_wake` (a commit there, which
wakes every runtime; `urgent`: a caller waits for a position of `consumer`, whose runtime
starts a pass at once), over the engine socket (consumers/remote.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

from memoryd.config import Config
from memoryd.consumers.remote import ENGINE_LINGER_SECONDS
from memoryd.consumers.runtime import Runtime
from memoryd.domain.errors import MemorydError
from memoryd.domain.limits import Limits
from memoryd.domain.recall import DEFAULT_CONTROL_KINDS
from memoryd.formation import engine as formation_engine
from memoryd.storage.qdrant import edge_process
from memoryd.storage.sqlite.store import SqliteStore
from memoryd.vectors.embedder import OpenAIEmbedder
from memoryd.vectors.recall import VectorRecall
from memoryd.vectors.setup import API_KEY_ENV

log = logging.getLogger(__name__)


async def run_consumers(engine: edge_process.Engine) -> None:
    """Apply the data dir's logs with the engine's index until cancelled."""
    options = engine.host.get("sync") or {}
    if engine.database is None:
        return  # an engine of the index alone
    store = SqliteStore(engine.database, synchronous=options.get("sqlite_synchronous", "NORMAL"))
    embedder = None
    if options.get("embedder_url"):
        embedder = OpenAIEmbedder(
            options["embedder_url"], options.get("embedder_model", ""),
            api_key=os.environ.get(API_KEY_ENV, ""), model_id=options.get("embedder_model_id", ""),
        )  # fmt: skip
    runtime = Runtime(
        store,
        poll_seconds=options.get("poll_seconds", 1.0),
        linger_seconds=ENGINE_LINGER_SECONDS,
        max_backoff_seconds=options.get("max_backoff_seconds", 30.0),
    )
    VectorRecall(
        engine.index,
        store,
        embedder=embedder,
        control_kinds=options.get("control_kinds") or DEFAULT_CONTROL_KINDS,
        index_message_keywords=options.get("keywords", True),
        sync_batch=options.get("batch", 500),
        runtime=runtime,
    )  # fmt: skip  (its consumer joins `runtime`)
    formation = _formation(engine.host.get("formation"), store)
    runtimes = [runtime] if formation is None or formation.runtime is None else [runtime, formation.runtime]
    engine.calls["runtime_wake"] = lambda urgent=False, consumer="": _wake(runtimes, store, urgent, consumer)
    engine.calls["runtime_state"] = lambda wake=False, urgent=False, consumer="": _state(
        runtimes, formation, store, wake, urgent, consumer
    )
    while True:  # the SQLite file may not be openable yet (a full disk): retried
        try:
            await store.open()
            break
        except MemorydError as error:
            log.warning("log consumers in the engine: the message store did not open (%s); retrying", error.reason)
            await asyncio.sleep(runtime.poll_seconds)
    log.info("log consumers run in the vector engine process", extra={"formation": formation is not None})
    try:
        if formation is None:
            await runtime.run()
        else:  # formation.run closes its runtime and the model's client when cancelled
            await asyncio.gather(runtime.run(), formation.run())
    finally:
        try:
            await runtime.close()
        finally:
            if embedder is not None:
                await embedder.close()
            await store.close()


def _formation(settings: dict[str, Any] | None, store: SqliteStore) -> formation_engine.Formation | None:
    """Memory formation's consumers, as the serving process's configuration asks
    (formation_engine.engine_options); None when it is off."""
    if not settings:
        return None
    values = dict(settings)
    limits = Limits(**values.pop("limits", {}))
    known = {name for name in Config.__dataclass_fields__}
    config = Config(
        **{k: v for k, v in values.items() if k in known},
        llm_api_key=os.environ.get(formation_engine.LLM_KEY_ENV, ""),
        limits=limits,
    )
    formation = formation_engine.build(config, store, limits, engine=True)
    return formation if formation.enabled else None


async def _wake(runtimes: list[Runtime], store: SqliteStore, urgent: bool, consumer: str) -> None:
    # A commit: as the store's own commits would wake every runtime; urgent: a waiter waits for
    # a position of `consumer` (its runtime starts a pass now, another runtime's deferral holds).
    if not urgent:
        store.notifier.notify()
        return
    for runtime in runtimes:
        if not consumer or consumer in runtime.tracks:
            runtime.wake(urgent=True)


async def _state(
    runtimes: list[Runtime],
    formation: formation_engine.Formation | None,
    store: SqliteStore,
    wake: bool,
    urgent: bool,
    consumer: str,
) -> dict[str, Any]:
    if wake:
        await _wake(runtimes, store, urgent, consumer)
    state: dict[str, Any] = {}
    for runtime in runtimes:
        state.update(runtime.snapshot())
    if formation is not None:
        formation.report(state)
    return state


def main(argv: list[str]) -> int:
    return edge_process.main(argv, background=run_consumers)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
