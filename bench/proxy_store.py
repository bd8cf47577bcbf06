"""The proxy's read of a shared session on PostgreSQL, the one query before a compacting
request: when the replica's copy is current (no row), when only the state changed, and
when another replica put a head in (85 KB of it read). On a database of its own, created
and dropped on the server `COMPACT_TEST_POSTGRES` names (default: 127.0.0.1, trust).

    python -m bench.proxy_store
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import time

import psycopg
from psycopg import sql

from app.adapters.pg_database import Database, PoolLimits
from app.adapters.pg_proxy_sessions import PgProxySessions
from app.core.proxy import SessionState, make_head

ADMIN = os.environ.get("COMPACT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
READS = 200


async def measure(url: str) -> None:
    database = Database(url, PoolLimits())
    store = PgProxySessions(database)
    client = [{"role": "user", "content": "x" * 85_000}, {"role": "assistant", "content": "ok"}]
    version = await store.save("s", SessionState(), make_head(client[:1], client, 1, 20_000))
    cases = {
        "current copy (no row)": (version, version),
        "state changed": (0, version),
        "state and an 85 KB head": (0, 0),
    }
    for label, (mine, head) in cases.items():
        times = []
        for _ in range(READS):
            began = time.perf_counter()
            await store.load("s", mine, head)
            times.append(time.perf_counter() - began)
        times.sort()
        median, p90 = statistics.median(times) * 1000, times[int(0.9 * READS)] * 1000
        print(f"{label}: median {median:.2f} ms, p90 {p90:.2f} ms")
    database.close()


def main() -> None:
    name = f"cc_bench_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            info = psycopg.conninfo.conninfo_to_dict(ADMIN)
            info["dbname"] = name
            asyncio.run(measure(psycopg.conninfo.make_conninfo(**info)))  # type: ignore[arg-type]
        finally:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


if __name__ == "__main__":
    main()
