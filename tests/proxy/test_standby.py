"""The proxy's compactions against an agent's large turns: a standby head kept ready for a
turn twice as large as the session's largest (the pinned messages or the previous head
summarized again when they leave it no room, with one beside it that keeps them as sent,
for a large turn that fits with them below the splice mark), made by the
extractive summarizer in the background beside the configured summarizer's compaction and
put in over the limit only while that one runs; a request over the limit compacted at
once, never left waiting for a compaction it began itself; a running compaction that could
stand for no more than a head just put in cancelled."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import ModelSpec
from app.core.ports import SummaryRequest
from app.core.proxy import Head, make_head
from app.core.summary import ExtractiveSummarizer
from app.proxy.compactor import ProxyCompactor
from app.proxy.counted import each
from app.proxy.exchange import Exchange, ProxyPolicy
from tests.builders import (
    FakeSummarizer,
    assistant,
    build_service,
    rounds,
    tool_result,
    tool_use,
    user,
)

pytestmark = pytest.mark.anyio

SPEC = ModelSpec(context_window=4000, tokenizer="tiktoken", margin=0.0)
LIMIT = 3900
BYTES_PER_TOKEN = 3  # the pace's reading of a body's growth (app.core.proxy.pace)
# Closing lets background compactions finish for the policy's wait: the blocked ones never do.
QUICK_CLOSE = ProxyPolicy(wait_seconds=0.05)


class Blocked:
    """A configured summarizer that never answers: a compaction it makes never finishes."""

    def __init__(self) -> None:
        self.asked = 0
        self._reached = asyncio.Event()
        self.summarizer = FakeSummarizer(self._never)

    async def _never(self, request: SummaryRequest) -> str:
        self.asked += 1
        self._reached.set()
        await asyncio.Event().wait()
        return ""

    async def times_asked(self) -> int:
        """How often it was asked, once a compaction has reached it: a background
        compaction archives first, in a thread, so on a loaded machine it may not yet have
        asked when the test looks."""
        await asyncio.wait_for(self._reached.wait(), 10)
        await asyncio.sleep(0.05)  # a second ask, if one were coming, has its turn
        return self.asked


def _compactor(
    tokenizer: TiktokenTokenizer, blocked: Blocked, policy: ProxyPolicy | None = None
) -> ProxyCompactor:
    background = build_service(tokenizer, blocked.summarizer)
    immediate = build_service(tokenizer, ExtractiveSummarizer())
    return ProxyCompactor(background, immediate, policy)


def _session(last: int) -> list[dict[str, Any]]:
    return [user("Fix the build of the parser."), *rounds(1, last)[1:]]


def _exchange(messages: list[dict[str, Any]]) -> Exchange:
    body = {"model": "claude-tiny", "max_tokens": 100, "messages": messages}
    return Exchange("anthropic", "s", body, SPEC, LIMIT, len(orjson.dumps(body)))


def _large_turn(client: list[dict[str, Any]], share: float) -> list[dict[str, Any]]:
    """`client`, then a task whose tool result takes about `share` of the limit."""
    output = "word " * int(share * LIMIT)
    return [
        *client,
        user("Read the log."),
        assistant("Reading.", tool_use("bash", "big", command="cat build.log")),
        tool_result("big", output),
    ]


def _paced(compactor: ProxyCompactor, client: list[dict[str, Any]], share: float) -> None:
    """The session's last turn before `client` added about `share` of the limit."""
    size = _exchange(client).size
    compactor._session("s").pace.sizes = [size - BYTES_PER_TOKEN * int(share * LIMIT)]


async def _begun_at_a_slow_pace(compactor: ProxyCompactor) -> asyncio.Task[Any]:
    """The configured summarizer's compaction begun past the start mark (`_session(8)`,
    about 0.8 of the limit) of a session of small turns: three of them (two while it runs,
    one more) reach the splice mark."""
    client = _session(8)
    _paced(compactor, client, 0.03)
    planned = await compactor.plan(_exchange(client))
    assert planned.action == "precompact_started"
    running = compactor._sessions["s"].running
    assert running is not None
    return running


async def _standby_beside_a_head(
    compactor: ProxyCompactor, client: list[dict[str, Any]], largest: float
) -> tuple[Head, Head, list[dict[str, Any]]]:
    """A head for `client` put in, then the standby for the request two rounds later, in a
    session one of whose turns added `largest` of the limit: the head, the standby and
    that request's messages."""
    session = compactor._session("s")
    head = await compactor._compact(compactor.immediate, _exchange(client), client, None, None)
    assert head is not None
    session.head = head
    session.pace.largest = BYTES_PER_TOKEN * int(largest * LIMIT)
    later = [*client, *rounds(9, 10)]
    await compactor.plan(_exchange(later))
    assert session.spare is not None
    await asyncio.wait_for(asyncio.shield(session.spare), 5)
    assert session.standby is not None
    return head, session.standby, later


async def _a_large_turn_takes_it(
    compactor: ProxyCompactor, later: list[dict[str, Any]], standby: Head, share: float = 0.6
) -> None:
    """A turn of `share` of the limit after `later`: over the limit, `standby` goes in and
    the request fits, without waiting."""
    over = await compactor.plan(_exchange(_large_turn([*later, assistant("Done.")], share)))
    assert over.action == "applied"
    assert (over.tokens_before or 0) > LIMIT >= (over.tokens_after or 0)
    assert compactor._sessions["s"].head is standby


async def test_a_head_is_kept_ready_for_a_turn_as_large_as_the_sessions_largest(
    tokenizer: TiktokenTokenizer,
) -> None:
    blocked = Blocked()
    compactor = _compactor(tokenizer, blocked)
    # Earlier, one turn of the session added about 0.65 of the limit.
    compactor._session("s").pace.largest = BYTES_PER_TOKEN * int(0.65 * LIMIT)
    client = _session(5)  # about half the limit: below the start mark
    first = await compactor.plan(_exchange(client))
    assert first.action == "precompact_started"
    assert (first.tokens_before or 0) < 0.7 * LIMIT
    session = compactor._sessions["s"]
    assert session.running is None
    assert session.spare is not None
    await asyncio.wait_for(asyncio.shield(session.spare), 5)
    assert session.ready is None
    assert session.standby is not None
    assert session.standby.quick  # made by the extractive summarizer
    assert blocked.asked == 0
    # A turn as large comes: the ready head goes in, the request fits, nothing waits.
    later = _large_turn(client, 0.6)
    second = await compactor.plan(_exchange(later))
    assert second.action == "applied"
    assert (second.tokens_before or 0) > LIMIT >= (second.tokens_after or 0)
    assert orjson.dumps(later[-1]).decode() in orjson.dumps(second.messages).decode()


async def test_a_standby_is_made_again_once_the_history_grew_since_it_began_whatever_the_head(
    tokenizer: TiktokenTokenizer,
) -> None:
    """What a standby stands for is the client's history when it began: after a head goes
    in, the request's count drops, but the turns added since still make it stale."""
    compactor = _compactor(tokenizer, Blocked(), QUICK_CLOSE)
    compactor._session("s").pace.largest = BYTES_PER_TOKEN * int(0.9 * LIMIT)  # always at risk
    client = _session(8)
    first = await compactor.plan(_exchange(client))
    session = compactor._sessions["s"]
    assert session.spare is not None
    await asyncio.wait_for(asyncio.shield(session.spare), 5)
    assert session.standby is not None
    # A head goes in (as one finished in the background would): the count drops by far
    # more than the turns that follow add.
    session.head = await compactor._compact(
        compactor.immediate, _exchange(client), client, None, None
    )
    assert session.head is not None
    later = [*client, *rounds(6, 7)]  # two more rounds: over a tenth of the limit
    planned = await compactor.plan(_exchange(later))
    assert (planned.tokens_after or 0) < (first.tokens_before or 0)  # the head's request
    assert session.spare is not None  # begun again, from `later`
    assert session.spare_from == len(later)
    # No turn since: nothing begun again.
    await asyncio.wait_for(asyncio.shield(session.spare), 5)
    await compactor.plan(_exchange(later))
    assert session.spare is None


async def test_a_standby_beside_a_running_compaction_goes_in_over_the_limit_only(
    tokenizer: TiktokenTokenizer,
) -> None:
    blocked = Blocked()
    compactor = _compactor(tokenizer, blocked, QUICK_CLOSE)
    client = _session(8)  # about 0.8 of the limit: past the start mark
    _paced(compactor, client, 0.3)  # one more such turn passes the limit
    planned = await compactor.plan(_exchange(client))
    assert planned.action == "precompact_started"
    session = compactor._sessions["s"]
    assert session.running is not None  # the configured summarizer's, which never answers
    assert session.spare is not None
    await asyncio.wait_for(asyncio.shield(session.spare), 5)
    assert session.standby is not None
    assert session.standby.quick
    # Past the splice mark but within the limit: the configured summarizer's may yet be
    # ready, so the standby stays out.
    later = [*client, user("Go on. " + "detail " * 200)]
    waited = await compactor.plan(_exchange(later))
    assert waited.action == "none"
    assert 0.85 * LIMIT <= (waited.tokens_before or 0) <= LIMIT
    assert session.standby is not None
    # Over the limit: the standby goes in, nothing waits.
    over = await compactor.plan(_exchange(_large_turn([*later, assistant("Done.")], 0.3)))
    assert over.action == "applied"
    assert (over.tokens_after or 0) <= LIMIT
    assert await blocked.times_asked() == 1
    await compactor.aclose()


async def test_a_compaction_at_the_start_mark_at_a_slow_pace_is_the_configured_summarizers(
    tokenizer: TiktokenTokenizer,
) -> None:
    blocked = Blocked()
    compactor = _compactor(tokenizer, blocked, QUICK_CLOSE)
    running = await _begun_at_a_slow_pace(compactor)
    await asyncio.sleep(0.2)
    assert not running.done()
    assert await blocked.times_asked() == 1
    await compactor.aclose()


async def test_a_request_over_the_limit_never_waits_for_a_compaction_it_began(
    tokenizer: TiktokenTokenizer,
) -> None:
    blocked = Blocked()
    # A wait far longer than the test's deadline: a request that waited for the compaction
    # begun on its own account would never be planned in time.
    compactor = _compactor(tokenizer, blocked, ProxyPolicy(wait_seconds=60))
    client = _session(12)
    _paced(compactor, client, 0.3)
    planned = await asyncio.wait_for(compactor.plan(_exchange(client)), 10)
    assert planned.action == "compacted"
    assert (planned.tokens_after or 0) <= LIMIT
    await compactor.aclose()


async def test_a_running_compaction_that_could_stand_for_no_more_than_a_new_head_is_cancelled(
    tokenizer: TiktokenTokenizer,
) -> None:
    compactor = _compactor(tokenizer, Blocked(), ProxyPolicy(wait_seconds=0.01))
    stale = await _begun_at_a_slow_pace(compactor)
    client, session = _session(8), compactor._sessions["s"]
    # The next turn passes the limit: a head made at once stands for all of `client`.
    second = await compactor.plan(_exchange(_large_turn(client, 0.5)))
    assert second.action == "compacted"
    assert session.head is not None
    assert session.head.replaced >= len(client)
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait_for(stale, 5)
    assert stale.cancelled()
    assert session.running is not stale
    await compactor.aclose()


async def test_closing_lets_a_background_compaction_finish_within_the_wait(
    tokenizer: TiktokenTokenizer,
) -> None:
    async def slow(request: SummaryRequest) -> str:
        await asyncio.sleep(0.2)
        return ""  # refused: the service falls back to the extractive summary

    background = build_service(tokenizer, FakeSummarizer(slow))
    immediate = build_service(tokenizer, ExtractiveSummarizer())
    compactor = ProxyCompactor(background, immediate, ProxyPolicy(wait_seconds=5))
    task = await _begun_at_a_slow_pace(compactor)
    await compactor.aclose()
    assert task.done()
    assert not task.cancelled()  # its archive is written whole, not left to a worker thread


async def test_a_standby_for_a_turn_the_pinned_messages_leave_no_room_for_summarizes_them_too(
    tokenizer: TiktokenTokenizer,
) -> None:
    compactor = _compactor(tokenizer, Blocked(), QUICK_CLOSE)
    client = _session(8)
    # One turn of the session added about 0.65 of the limit: with the pinned messages, a
    # summary and the least kept part, a turn that large, let alone twice, would not fit.
    head, standby, later = await _standby_beside_a_head(compactor, client, 0.65)
    assert head.pinned >= 1
    assert not head.unpinned
    assert standby.unpinned
    assert standby.pinned == 0
    assert later[0] not in standby.messages  # the first request, summarized with the rest
    await _a_large_turn_takes_it(compactor, later, standby)
    await compactor.aclose()


async def test_a_standby_for_a_turn_the_previous_head_leaves_no_room_for_summarizes_it_too(
    tokenizer: TiktokenTokenizer,
) -> None:
    compactor = _compactor(tokenizer, Blocked(), ProxyPolicy(wait_seconds=0.05, pin_share=0.0))
    # Twice the session's largest turn is about 0.8 of the limit: with the head, a new
    # summary and the least kept part, it would not fit.
    head, standby, later = await _standby_beside_a_head(compactor, _session(8), 0.4)
    assert head.pinned == 0
    assert standby.unpinned
    assert standby.core[0] != head.core[0]  # the old summary summarized again, not kept
    assert all(m not in standby.core for m in head.core if m["role"] == "user")
    await _a_large_turn_takes_it(compactor, later, standby)
    await compactor.aclose()


async def test_beside_a_standby_that_summarizes_the_previous_head_again_one_keeps_it_as_sent(
    tokenizer: TiktokenTokenizer,
) -> None:
    """A large turn that fits with the previous head (the request then below the splice
    mark) puts in the standby that keeps that head, byte for byte, and summarizes only the
    turns since: the request reads the head from the provider's cache. Twice the
    session's largest turn would not fit with it: that one has the standby that summarizes
    the head too (above), kept as before."""
    compactor = _compactor(tokenizer, Blocked(), ProxyPolicy(wait_seconds=0.05, pin_share=0.0))
    head, standby, later = await _standby_beside_a_head(compactor, _session(8), 0.4)
    assert standby.unpinned
    kept = compactor._sessions["s"].kept_standby
    assert kept is not None
    assert not kept.unpinned
    await _a_large_turn_takes_it(compactor, later, kept, 0.5)
    put_in = compactor._sessions["s"].head
    assert put_in is kept
    assert put_in.core[: len(head.core)] == head.core
    assert put_in.replaced > head.replaced  # the turns since the head, summarized
    await compactor.aclose()


async def test_the_standby_that_keeps_the_previous_head_stays_out_past_the_splice_mark(
    tokenizer: TiktokenTokenizer,
) -> None:
    """With the kept head the request would pass the splice mark (the next turns would
    need a head again at once, near the limit): the standby that summarizes it goes in."""
    compactor = _compactor(tokenizer, Blocked(), ProxyPolicy(wait_seconds=0.05, pin_share=0.0))
    _, standby, later = await _standby_beside_a_head(compactor, _session(8), 0.4)
    assert compactor._sessions["s"].kept_standby is not None
    await _a_large_turn_takes_it(compactor, later, standby, 0.6)
    await compactor.aclose()


async def test_a_standby_keeps_as_sent_no_more_than_leaves_room_for_the_turn_it_is_for(
    tokenizer: TiktokenTokenizer,
) -> None:
    compactor = _compactor(tokenizer, Blocked(), ProxyPolicy(wait_seconds=0.05, pin_share=0.0))
    client = _session(8)  # about 0.8 of the limit
    session = compactor._session("s")
    session.pace.largest = BYTES_PER_TOKEN * int(0.3 * LIMIT)  # a standby for 0.6 of it
    await compactor.plan(_exchange(client))
    assert session.spare is not None
    await asyncio.wait_for(asyncio.shield(session.spare), 5)
    standby = session.standby
    assert standby is not None
    assert not standby.unpinned  # nothing kept before its summary to crowd it
    spliced = standby.splice(client)
    assert spliced is not None
    count = await compactor._count(_exchange(client), spliced)
    # Room for that turn, and for the growth foreseen before the standby is ready (up to
    # the splice mark, `Forecast.ahead`): a head kept for the target share (0.5) leaves less.
    assert count.raw + int(0.7 * LIMIT) <= LIMIT
    await compactor.aclose()


async def test_over_the_limit_a_head_that_leaves_the_request_below_the_splice_mark_goes_first(
    tokenizer: TiktokenTokenizer,
) -> None:
    """Of the finished heads, over the limit, the first that brings the request below the
    splice mark goes in, not the first that brings it just under the limit: with that one
    the next turn needs a head again at once, near the limit. Without one below the mark,
    the first within the limit."""
    compactor = _compactor(tokenizer, Blocked(), QUICK_CLOSE)
    client = _large_turn(_session(8), 0.4)
    ex = _exchange(client)
    forecast = compactor._forecast(ex, None)
    summary = ({"role": "user", "content": "Summary of the earlier turns."},)

    async def sent(replaced: int) -> int:
        spliced = make_head(summary, client, replaced, 10).splice(client)
        assert spliced is not None
        return forecast.judged((await compactor._count(ex, spliced)).raw)

    assert await sent(0) > LIMIT
    sizes = {r: await sent(r) for r in range(2, len(client) - 2, 2)}
    splice = 0.85 * LIMIT
    snug = next(r for r, tokens in sizes.items() if splice < tokens <= LIMIT)
    roomy = next(r for r, tokens in sizes.items() if tokens <= splice)
    near, far = (make_head(summary, client, r, 10) for r in (snug, roomy))
    first = await compactor._chosen(ex, forecast, client, each([near, far]), snug=True)
    assert first is not None
    assert first[0] is far
    alone = await compactor._chosen(ex, forecast, client, each([near]), snug=True)
    assert alone is not None
    assert alone[0] is near
    below = await compactor._chosen(ex, forecast, client, each([near, far]))
    assert below is not None
    assert below[0] is near  # below the limit, the first within it
    await compactor.aclose()
