"""Proxy replicas on one PostgreSQL database, each with its own pool as a process has: a
session's requests sent by turns through them carry the same head bytes, a restarted
replica keeps them, a head put in on one is read by the other before it splices, and a
database that goes away leaves each replica to go on from its memory, quickly."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.adapters.pg_database import Database, PoolLimits
from app.adapters.pg_proxy_sessions import PgProxySessions, ProxyStoreError
from app.adapters.tokenizer import TiktokenTokenizer
from app.api.parts import parts_of
from app.core.proxy.stored import SessionState
from app.main import create_app
from app.proxy.app import ProxyApp
from app.settings import Settings
from app.wiring.service import Stores
from tests.core.proxy.test_stored import _head as stored_head
from tests.postgres.conftest import CuttableProxy, url_through
from tests.proxy.fakes import FakeUpstream
from tests.proxy.replicas import head_bytes, history, later, replica, send, written

pytestmark = pytest.mark.anyio

LIMITS = PoolLimits(min_size=1, max_size=2, wait=1.0, connect_timeout=1)


@pytest.fixture
def pools() -> Iterator[list[Database]]:
    made: list[Database] = []
    yield made
    for database in made:
        database.close()


def on(
    url: str, pools: list[Database], tokenizer: TiktokenTokenizer
) -> tuple[ProxyApp, FakeUpstream]:
    """A replica with its own pool on `url`, its session key read from the database."""
    database = Database(url, LIMITS)
    pools.append(database)
    store = PgProxySessions(database)
    return replica(store, tokenizer, store.secret(2.0))


def session() -> str:
    return f"agent-{secrets.token_hex(4)}"


async def test_replicas_and_a_restart_carry_the_same_head_bytes(
    database_url: str, pools: list[Database], tokenizer: TiktokenTokenizer
) -> None:
    (a, sent_a), (b, sent_b) = (
        on(database_url, pools, tokenizer),
        on(database_url, pools, tokenizer),
    )
    assert a.config.secret == b.config.secret
    agent = session()
    first = history(12)
    assert (await send(a, sent_a, first, agent))[0] == "compacted"
    await written(a)  # as it is long before the agent's next request
    head = head_bytes(sent_a.sent[-1], first)
    second = later(first, 1)
    assert (await send(b, sent_b, second, agent))[0] == "applied"
    assert head_bytes(sent_b.sent[-1], second) == head
    # A replica started since (a restart of A): the same bytes again.
    c, sent_c = on(database_url, pools, tokenizer)
    third = later(second, 2)
    assert (await send(c, sent_c, third, agent))[0] == "applied"
    assert head_bytes(sent_c.sent[-1], third) == head


async def test_a_replica_stopping_right_after_a_head_went_in_writes_it_first(
    database_url: str, pools: list[Database], tokenizer: TiktokenTokenizer
) -> None:
    a, sent_a = on(database_url, pools, tokenizer)
    agent, first = session(), history(12)
    assert (await send(a, sent_a, first, agent))[0] == "compacted"
    await a.aclose()  # at once: the write may still be under way
    restarted, sent = on(database_url, pools, tokenizer)
    second = later(first, 1)
    assert (await send(restarted, sent, second, agent))[0] == "applied"
    assert head_bytes(sent.sent[-1], second) == head_bytes(sent_a.sent[-1], first)


async def test_a_head_put_in_on_one_replica_is_read_by_the_other_before_it_splices(
    database_url: str, pools: list[Database], tokenizer: TiktokenTokenizer
) -> None:
    (a, sent_a), (b, sent_b) = (
        on(database_url, pools, tokenizer),
        on(database_url, pools, tokenizer),
    )
    agent = session()
    first = history(12)
    await send(a, sent_a, first, agent)
    await written(a)
    grown = history(24)
    assert (await send(b, sent_b, grown, agent))[0] == "compacted"
    await written(b)
    new_head = head_bytes(sent_b.sent[-1], grown)
    assert new_head != head_bytes(sent_a.sent[-1], first)
    next_turn = later(grown, 1)
    assert (await send(a, sent_a, next_turn, agent))[0] == "applied"
    assert head_bytes(sent_a.sent[-1], next_turn) == new_head


async def test_a_current_copy_reads_no_row_and_an_unchanged_head_is_not_read(
    database_url: str, pools: list[Database]
) -> None:
    database = Database(database_url, LIMITS)
    pools.append(database)
    store = PgProxySessions(database)
    agent, head = session(), stored_head()
    first = await store.save(agent, SessionState(made=1), head)
    second = await store.save(agent, SessionState(made=2))
    assert second > first
    assert await store.load(agent, second, first) is None
    stale = await store.load(agent, first, first)
    assert stale is not None
    assert (stale.version, stale.head_version, stale.head, stale.state.made) == (
        second,
        first,
        None,
        2,
    )
    new = await store.load(agent, 0, 0)
    assert new is not None
    assert (new.head, new.head_version) == (head, first)


async def test_a_session_pruned_and_written_again_reads_as_newer_than_any_copy(
    database_url: str, pools: list[Database]
) -> None:
    database = Database(database_url, LIMITS)
    pools.append(database)
    store = PgProxySessions(database)
    agent, head = session(), stored_head()
    old = await store.save(agent, SessionState(made=1), head)
    with database.connection() as conn:
        conn.execute("DELETE FROM compact_proxy_sessions WHERE session_id = %s", (agent,))
    new = await store.save(agent, SessionState(made=2))
    assert new > old
    read = await store.load(agent, old, old)  # a replica's copy of the pruned row
    assert read is not None
    # Its state is read again; its head, none newer being stored, is the replica's own.
    assert (read.version, read.head_version, read.head, read.state.made) == (new, old, None, 2)


async def test_a_database_gone_leaves_the_replica_its_memory_at_once(
    database_url: str, pools: list[Database], tokenizer: TiktokenTokenizer, proxy: CuttableProxy
) -> None:
    app, upstream = on(url_through(database_url, proxy.port), pools, tokenizer)
    agent, first = session(), history(12)
    proxy.cut()
    began = time.monotonic()
    assert (await send(app, upstream, first, agent))[0] == "compacted"
    second = later(first, 1)
    assert (await send(app, upstream, second, agent))[0] == "applied"
    third = later(second, 2)
    assert (await send(app, upstream, third, agent))[0] == "applied"
    # One bounded wait (the pool's), then none while the store pauses.
    assert time.monotonic() - began < LIMITS.wait + 2.0
    assert head_bytes(upstream.sent[-1], third) == head_bytes(upstream.sent[0], first)
    store = app.compactor.shared.store if app.compactor else None
    assert isinstance(store, PgProxySessions)
    with pytest.raises(ProxyStoreError, match="not asked again yet"):
        await store.load(agent, 0, 0)


def test_every_replica_of_the_app_keys_its_session_ids_alike(
    database_url: str, tmp_path: Path, pools: list[Database]
) -> None:
    def proxy_of(name: str) -> ProxyApp:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            data_dir=str(tmp_path / name),
            workdir=str(tmp_path),
            database_url=database_url,
            proxy_port=1,
            summarizer="extractive",
        )
        stores = Stores(settings)
        assert stores.database is not None
        pools.append(stores.database)
        parts = parts_of(create_app(settings, stores=stores))
        assert parts is not None
        assert isinstance(parts.proxy, ProxyApp)
        return parts.proxy

    a, b = proxy_of("a"), proxy_of("b")
    assert len(a.config.secret) == 32
    assert a.config.secret == b.config.secret
