"""Tests against a real PostgreSQL: each test session gets its own freshly created
database (`cc_test_<random>`), dropped at the end, so several test runs can share one
server. The server is `COMPACT_TEST_POSTGRES` (default `postgresql://postgres@127.0.0.1:5432/postgres`,
an administrative database used only to create and drop the test ones).

Without a reachable server these tests are skipped, saying why; with `CI=true` they fail
instead, so CI cannot pass without them.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from typing import Any

import psycopg
import pytest
from psycopg import sql

ADMIN_URL = os.environ.get("COMPACT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def _url_for(database: str, host: str = "127.0.0.1", port: int | None = None) -> str:
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    info["dbname"] = database
    if port is not None:
        info["host"], info["port"] = host, str(port)
    return psycopg.conninfo.make_conninfo(**info)  # type: ignore[arg-type]


def _admin() -> psycopg.Connection[Any]:
    try:
        return psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        reason = f"PostgreSQL unreachable at {ADMIN_URL}: {str(exc).strip().splitlines()[0]}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: the PostgreSQL tests are required)")
        pytest.skip(reason)


@pytest.fixture(scope="session")
def new_database() -> Iterator[Callable[[], str]]:
    """Creates empty databases with unique names; drops them all at the end."""
    created: list[str] = []
    admin = _admin()

    def make() -> str:
        name = f"cc_test_{os.getpid()}_{secrets.token_hex(4)}"
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        created.append(name)
        return name

    yield make
    admin.close()
    # All at once: each drop waits for a checkpoint, which concurrent drops share.
    with ThreadPoolExecutor(max(len(created), 1)) as pool:
        list(pool.map(_drop, created))


def _drop(name: str) -> None:
    with suppress(psycopg.Error), psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture(scope="session")
def shared_database(new_database: Callable[[], str]) -> str:
    """One database for the tests of this session that do not need an empty one (they
    use unique ids)."""
    return new_database()


@pytest.fixture(scope="session")
def database_url(shared_database: str) -> str:
    return _url_for(shared_database)


@pytest.fixture
def empty_database_url(new_database: Callable[[], str]) -> str:
    return _url_for(new_database())


def url_through(database_url: str, port: int) -> str:
    info = psycopg.conninfo.conninfo_to_dict(database_url)
    return _url_for(str(info["dbname"]), port=port)


class CuttableProxy:
    """A TCP proxy on 127.0.0.1 in front of the database that the test can cut (every
    connection closed, new ones refused) and restore: the database "stops" and "starts"
    without touching the machine's server, which other test runs share."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self._target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._up = threading.Event()
        self._up.set()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        self._up.clear()
        with self._lock:
            for sock in self._sockets:
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with suppress(OSError):
                    sock.close()
            self._sockets.clear()

    def restore(self) -> None:
        self._up.set()

    def close(self) -> None:
        self._closed = True
        self.cut()
        with suppress(OSError):
            self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._up.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(self._target, timeout=3)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._sockets.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            # Each socket is the source of one pump: that pump closes it, also when the
            # proxy closed before this connection was registered (no socket left to GC).
            source.close()


@pytest.fixture
def proxy() -> Iterator[CuttableProxy]:
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_URL)
    proxy = CuttableProxy(str(info.get("host") or "127.0.0.1"), int(info.get("port") or 5432))
    yield proxy
    proxy.close()
