"""A replica killed (kill -9) inside a transaction leaves it open on the server, holding the
tenant's counter document until the server's lifetime limit reaps it (60 s on MongoDB and
SecantusDB). The other replicas find it through the dead replica's published sessions
(storage/mongo/orphans.py) and kill it: a write of that tenant goes through well inside
the server's lifetime limit, without any lowered server setting."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid

from pymongo.errors import OperationFailure

from memoryd.domain import deadline
from memoryd.domain.models import Message
from memoryd.storage.mongo.store import MongoStore, _claim
from tests import processes

TENANT = "t"
WRITE_CONFLICT = 112

# A replica's MongoStore that opens a transaction on the tenant (its first statement, the
# claim of the counter document), says so, and waits to be killed.
HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from memoryd.storage.mongo.store import MongoStore, _claim

    async def main(uri, database, tenant):
        store = MongoStore(uri, database)
        await store.open()
        async with store.db.client.start_session() as session:
            await store._orphans.register(session)
            await session.start_transaction()
            await _claim(store.db, session, tenant)
            print("holding", flush=True)
            await asyncio.sleep(3600)

    asyncio.run(main(*sys.argv[1:]))
    """
)


async def test_a_write_goes_through_after_the_replica_holding_the_tenant_dies(mongo_uri):
    database = f"memoryd_dead_{uuid.uuid4().hex[:8]}"
    # A 20 s budget: more than the reaper needs, a third of the server's lifetime limit.
    store = MongoStore(mongo_uri, database, timeout_ms=20000)
    await store.open()
    holder = processes.popen([sys.executable, "-c", HOLDER, mongo_uri, database, TENANT],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        await store.append(TENANT, "s", [Message(role="user", content="before", timestamp=1)], None, 1)
        assert holder.stdout is not None
        lines = []
        while not lines or lines[-1] not in ("holding", ""):  # its log lines come first; "": it exited
            lines.append(holder.stdout.readline().strip())
        assert lines[-1] == "holding", lines
        # While the holder lives, this replica cannot write the tenant: its claim conflicts.
        token = deadline.set_remaining(1.0)
        try:
            async with store.db.client.start_session() as session:
                await session.start_transaction()
                try:
                    await _claim(store.db, session, TENANT)
                    conflicted = False
                except OperationFailure as exc:
                    conflicted = exc.code == WRITE_CONFLICT
                finally:
                    if session.in_transaction:
                        await session.abort_transaction()
        finally:
            deadline.reset(token)
        assert conflicted
        holder.kill()
        holder.wait(10)
        result = await store.append(TENANT, "s", [Message(role="user", content="after", timestamp=2)], None, 2)
        assert [m.content for m in result.messages] == ["after"]
        assert result.event_seq == 2
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(10)
        await store.close()
