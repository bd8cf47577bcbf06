"""A compaction the proxy never puts in leaves no archive and no record: a standby let go
when the agent rewrote its history, a head superseded or dropped, the heads of a session
forgotten or left at close; the head put in keeps both."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest
from anyio import to_thread

from app.adapters.archive_store import FileArchiveStore
from app.adapters.record_store import FileRecordStore
from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import ModelSpec
from app.core.ports import Tokenizer
from app.core.proxy import Head
from app.core.summary import ExtractiveSummarizer
from app.proxy.compactor import ProxyCompactor
from app.proxy.discards import DiscardingCompactor
from app.proxy.exchange import Exchange, ProxyPolicy
from app.proxy.parts import WRITTEN
from app.service.clock import time_sortable_id
from app.service.compaction import CompactionPorts, CompactionService
from app.service.metrics import NoMetrics
from app.service.retention import Discarder
from app.settings import Settings
from app.wiring.proxy import build_proxy
from app.wiring.service import build_service
from tests.builders import SERVICE_DEFAULTS, DictWorkdir, rounds, user

pytestmark = pytest.mark.anyio

SPEC = ModelSpec(context_window=4000, tokenizer="tiktoken", margin=0.0)
LIMIT = 3900
BYTES_PER_TOKEN = 3


class Discards:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def discard(self, session_id: str, archive_id: str) -> None:
        self.calls.append((session_id, archive_id))


class Stored:
    """The proxy's compactions on file stores under `root`."""

    def __init__(self, root: Path, tokenizer: TiktokenTokenizer) -> None:
        self.archives = FileArchiveStore(str(root))
        self.records = FileRecordStore(str(root))
        service = CompactionService(
            CompactionPorts(
                tokenizer=tokenizer,
                summarizer=ExtractiveSummarizer(),
                workdir=DictWorkdir(),
                archive=self.archives,
                records=self.records,
                new_id=time_sortable_id,
            ),
            SERVICE_DEFAULTS,
        )
        discarder = Discarder(self.archives, self.records)
        self.compactor = DiscardingCompactor(
            service, service, ProxyPolicy(wait_seconds=5), discarder
        )

    def kept(self, head: Head) -> tuple[bool, bool]:
        """Whether the head's archive is there, and whether a record names it."""
        assert head.archive is not None
        named = any(r.archive_id == head.archive for r in self.records.list("s"))
        return self.archives.load(head.archive) is not None, named


def _session(last: int) -> list[dict[str, Any]]:
    return [user("Fix the build of the parser."), *rounds(1, last)[1:]]


def _exchange(messages: list[dict[str, Any]], session: str = "s") -> Exchange:
    body = {"model": "claude-tiny", "max_tokens": 100, "messages": messages}
    return Exchange("anthropic", session, body, SPEC, LIMIT, len(orjson.dumps(body)))


async def test_a_standby_let_go_leaves_nothing_and_the_head_put_in_keeps_all(
    tmp_path: Path, tokenizer: TiktokenTokenizer
) -> None:
    stored = Stored(tmp_path, tokenizer)
    compactor = stored.compactor
    client = _session(8)
    session = compactor._session("s")
    head = await compactor._compact(compactor.immediate, _exchange(client), client, None, None)
    assert head is not None
    session.head = head
    session.pace.largest = BYTES_PER_TOKEN * int(0.65 * LIMIT)  # a standby is wanted
    later = [*client, *rounds(9, 10)]
    await compactor.plan(_exchange(later))
    assert session.spare is not None
    await asyncio.wait_for(asyncio.shield(session.spare), 5)
    standby = session.standby
    assert standby is not None
    if session.running is not None:
        await asyncio.wait_for(asyncio.shield(session.running), 5)
    await compactor.drained()
    assert stored.kept(head) == (True, True)
    assert stored.kept(standby) == (True, True)  # kept ready: not let go yet

    rewritten = [user("Fix the build of the lexer."), *later[1:]]
    planned = await compactor.plan(_exchange(rewritten))
    assert planned.reason == "history_changed"
    await compactor.drained()

    assert stored.kept(head) == (True, True)
    assert stored.kept(standby) == (False, False)
    await compactor.aclose()
    # Every record left names an archive that is there.
    for record in stored.records.list("s"):
        assert record.archive_id is None or stored.archives.load(record.archive_id) is not None


class Stalling(DiscardingCompactor):
    """Counts the head a compaction made only once `release` is set: a head covering as
    much can go in meanwhile, and cancel it."""

    reached = threading.Event()
    release = threading.Event()

    def _tokenizer(self, spec: ModelSpec) -> Tokenizer:
        tokenizer = super()._tokenizer(spec)
        if not WRITTEN.get():
            return tokenizer
        reached, release = self.reached, self.release

        class Waits:
            name = tokenizer.name

            def count(self, text: str) -> int:
                return tokenizer.count(text)

            def count_batch(self, texts: list[str]) -> list[int]:
                reached.set()
                release.wait(5)
                return tokenizer.count_batch(texts)

        return Waits()  # type: ignore[return-value]


async def test_a_background_compaction_cancelled_after_its_archive_leaves_nothing(
    tmp_path: Path, tokenizer: TiktokenTokenizer
) -> None:
    stored = Stored(tmp_path, tokenizer)
    service = stored.compactor.background
    compactor = Stalling(service, service, None, Discarder(stored.archives, stored.records))
    client = _session(8)
    compactor._session("s")
    task = asyncio.create_task(
        compactor._compact(service, _exchange(client), client, None, None, later=True)
    )
    # The compaction is recorded; its head is being counted.
    assert await to_thread.run_sync(compactor.reached.wait, 5)
    [record] = stored.records.list("s")
    assert record.outcome == "compacted"
    assert record.archive_id is not None
    task.cancel()
    compactor.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    await compactor.drained()
    assert stored.records.list("s") == []
    assert stored.archives.load(record.archive_id) is None


def _head(archive: str, replaced: int) -> Head:
    return Head((), replaced, "d", False, 10, archive=archive)


def _compactor(discards: Discards, policy: ProxyPolicy | None = None) -> DiscardingCompactor:
    service: Any = object()  # never asked to compact here
    return DiscardingCompactor(service, service, policy, discards)


async def test_a_superseded_head_goes_the_head_put_in_and_the_ones_kept_ready_stay() -> None:
    discards = Discards()
    compactor = _compactor(discards)
    session = compactor._session("s")
    put_in, old_ready, ready, standby = (
        _head("a-put-in", 4),
        _head("a-old-ready", 6),
        _head("a-ready", 8),
        _head("a-standby", 9),
    )
    session.head = put_in
    session.unsettled.append(put_in)
    session.offer(old_ready, standby=False)
    session.offer(ready, standby=False)  # supersedes old_ready
    session.offer(standby, standby=True)
    session.offer(_head("a-behind", 3), standby=True)  # stands for less than the head
    compactor._settle("s", session, (session.ready, session.standby))
    await compactor.drained()
    assert sorted(discards.calls) == [("s", "a-behind"), ("s", "a-old-ready")]  # in threads
    assert session.unsettled == [ready, standby]

    session.head = ready  # put in: the standby stands for more, and stays
    session.drop_older()
    compactor._settle("s", session, (session.ready, session.standby))
    assert session.unsettled == [standby]
    session.head = _head("a-later", 12)
    session.drop_older()  # the standby stood for less: dropped
    compactor._settle("s", session, (session.ready, session.standby))
    await compactor.drained()
    assert discards.calls[2:] == [("s", "a-standby")]
    assert session.unsettled == []


async def test_a_forgotten_sessions_heads_kept_ready_go_and_its_head_stays() -> None:
    discards = Discards()
    compactor = _compactor(discards, ProxyPolicy(max_sessions=1))
    session = compactor._session("a")
    session.head = _head("a-head", 4)
    session.unsettled.append(session.head)
    session.offer(_head("a-ready", 8), standby=False)
    compactor._session("b")  # "a" is forgotten
    await compactor.drained()
    assert discards.calls == [("a", "a-ready")]


async def test_closing_lets_go_of_the_heads_kept_ready() -> None:
    discards = Discards()
    compactor = _compactor(discards)
    session = compactor._session("s")
    session.offer(_head("a-standby", 8), standby=True)
    await compactor.aclose()
    assert discards.calls == [("s", "a-standby")]


def test_the_proxy_built_with_discards_discards(
    tmp_path: Path, tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACT_PROXY_PORT", "18999")
    monkeypatch.setenv("COMPACT_DATA_DIR", str(tmp_path))
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    service = build_service(settings, tokenizer, metrics=NoMetrics())
    plain = build_proxy(settings, service, NoMetrics())
    discarding = build_proxy(settings, service, NoMetrics(), Discards())
    assert plain is not None
    assert discarding is not None
    assert type(plain.compactor) is ProxyCompactor
    assert type(discarding.compactor) is DiscardingCompactor
