"""A caller's correction from another process, for tests/formation/test_precedence.py:

    python -m tests.formation.correct (--sqlite PATH | --mongo URI --database NAME)
        TENANT USER FACT_ID (--text TEXT | --delete)

opens its own store on the same database and runs FormationService's UpdateFact (or
DeleteFact) through the domain (formation/engine.py), as a serving process does. Prints the
result as one JSON line."""

from __future__ import annotations

import argparse
import asyncio
import json

from memoryd.domain.limits import Limits
from memoryd.domain.summaries import Summaries
from memoryd.formation.engine import Formation


async def correct(args: argparse.Namespace) -> dict:
    if args.sqlite:
        from memoryd.storage.sqlite.store import SqliteStore

        store = SqliteStore(args.sqlite)
    else:
        from memoryd.storage.mongo.store import MongoStore

        store = MongoStore(args.mongo, database=args.database)
    await store.open()
    try:
        formation = Formation(store, Summaries(store, Limits()), None)  # no model: corrections only
        if args.delete:
            return {"deleted": await formation.delete_fact(args.tenant, args.user, args.fact_id)}
        fact = await formation.update_fact(args.tenant, args.user, args.fact_id, args.text, "", (), 0)
        return {"text": fact.text, "version": fact.version, "corrected": fact.corrected}
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sqlite", default="")
    parser.add_argument("--mongo", default="")
    parser.add_argument("--database", default="")
    parser.add_argument("tenant")
    parser.add_argument("user")
    parser.add_argument("fact_id")
    parser.add_argument("--text", default="")
    parser.add_argument("--delete", action="store_true")
    print(json.dumps(asyncio.run(correct(parser.parse_args()))))


if __name__ == "__main__":
    main()
