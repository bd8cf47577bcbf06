"""The heads the proxy's compactions make. The session's first messages are pinned as sent
ahead of every head: a prefix the provider has cached since the session began, so the
first request after a compaction reads it from the cache. A session of large turns pins
as much (those turns have the standby), and a request that cannot fit with them is
compacted without them. A head made at once that leaves the request past the start mark
has the next compaction begun from it. A later compaction's archive holds none of the
turns an earlier one's holds."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.history import PART_OPENING
from app.core.model_table import ModelSpec
from app.core.ports import Archive
from app.core.recall import index_archive
from app.core.recall.rank import COPY_MARK
from app.core.summary import ExtractiveSummarizer
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import Exchange, Planned, ProxyPolicy
from tests.builders import (
    MemoryArchive,
    assistant,
    build_service,
    rounds,
    tool_result,
    tool_use,
    user,
)
from tests.proxy.heads import pinned

pytestmark = pytest.mark.anyio

SPEC = ModelSpec(context_window=4000, tokenizer="tiktoken", margin=0.0)
LIMIT = 3900


def _compactor(tokenizer: TiktokenTokenizer, policy: ProxyPolicy | None = None) -> ProxyCompactor:
    service = build_service(tokenizer, ExtractiveSummarizer())
    return ProxyCompactor(service, service, policy)


def _session(last: int) -> list[dict[str, Any]]:
    return [user("Fix the build of the parser."), *rounds(1, last)[1:]]


def _exchange(
    messages: list[dict[str, Any]], api: str = "anthropic", size: int | None = None
) -> Exchange:
    body = {"model": "claude-tiny", "max_tokens": 100, "messages": messages}
    size = len(orjson.dumps(body)) if size is None else size
    return Exchange(api, "s", body, SPEC, LIMIT, size)  # type: ignore[arg-type]


def _is_summary(message: Any) -> bool:
    return (
        message["role"] == "user" and "[Conversation compressed]" in orjson.dumps(message).decode()
    )


async def test_the_first_messages_stay_ahead_of_every_head_even_when_it_folds(
    tokenizer: TiktokenTokenizer,
) -> None:
    compactor = _compactor(tokenizer, ProxyPolicy(fold_share=0.0))  # every later one folds
    first_client, later_client = _session(12), _session(20)
    first = await compactor.plan(_exchange(first_client))
    later = await compactor.plan(_exchange(later_client))
    assert (first.action, later.action) == ("compacted", "compacted")
    count = pinned(first.messages, first_client)
    assert count >= 1
    assert first.messages[count - 1]["role"] == "user"  # the end of a request the agent sent
    assert _is_summary(first.messages[count])
    # Folded: the old summary is summarized again, the pinned messages are not.
    assert pinned(later.messages, later_client) == count
    assert _is_summary(later.messages[count])
    assert not any(_is_summary(m) for m in later.messages[count + 1 :])
    assert (later.tokens_after or 0) <= LIMIT


async def test_a_pin_share_of_zero_pins_nothing(tokenizer: TiktokenTokenizer) -> None:
    compactor = _compactor(tokenizer, ProxyPolicy(pin_share=0.0))
    planned = await compactor.plan(_exchange(_session(12)))
    assert planned.action == "compacted"
    assert _is_summary(planned.messages[0])


async def test_a_session_of_large_turns_pins_its_first_messages_too(
    tokenizer: TiktokenTokenizer,
) -> None:
    compactor = _compactor(tokenizer)
    client = _session(12)
    # Two earlier requests, the second larger by more bytes than the limit has tokens: the
    # pin does not give way to the session's pace (a standby takes its large turns).
    for size in (1_000, 1_000 + 3 * LIMIT):
        await compactor.plan(_exchange(client[:1], size=size))
    planned = await compactor.plan(_exchange(client))
    assert planned.action == "compacted"
    assert planned.messages[0] == client[0]
    assert pinned(planned.messages, client) >= 1


async def test_openai_pins_up_to_a_tool_message_answered_before_the_next_assistant_turn(
    tokenizer: TiktokenTokenizer,
) -> None:
    def call(i: int) -> list[dict[str, Any]]:
        function = {"name": "bash", "arguments": orjson.dumps({"command": f"make {i}"}).decode()}
        return [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"c{i}", "type": "function", "function": function}],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": "line of output\n" * 60},
        ]

    client = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the build of the parser."},
    ]
    for i in range(1, 21):
        client += call(i)
    planned = await _compactor(tokenizer).plan(_exchange(client, api="openai"))
    assert planned.action == "compacted"
    count = pinned(planned.messages, client)
    assert count >= 3  # the system message, the request, and at least one answered call
    assert planned.messages[count - 1]["role"] == "tool"
    assert client[count]["role"] == "assistant"
    assert _is_summary(planned.messages[count])


async def test_a_retry_that_cannot_fit_with_the_pinned_messages_summarizes_them_too(
    tokenizer: TiktokenTokenizer,
) -> None:
    compactor = _compactor(tokenizer)
    client = _session(12)
    first = await compactor.plan(_exchange(client))
    count = pinned(first.messages, client)
    assert count >= 1
    # The provider counts more than we did: it takes fewer tokens than the pinned
    # messages and the head leave room for.
    retried: Planned | None = await compactor.retry(_exchange(client), first.messages, 900)
    assert retried is not None
    assert retried.action == "retried"
    assert pinned(retried.messages, client) == 0
    assert _is_summary(retried.messages[0])
    assert retried.counted < first.counted


async def test_a_head_made_at_once_past_the_start_mark_has_the_next_one_begun_from_it(
    tokenizer: TiktokenTokenizer,
) -> None:
    compactor = _compactor(tokenizer, ProxyPolicy(pin_share=0.0))
    # A tool result of about 0.68 of the limit: kept as sent by the compaction made at once
    # (with a summary's guess it fits), which leaves the request past the start mark.
    output = "word " * int(0.68 * LIMIT)
    client = [
        *_session(8),
        user("Read the log."),
        assistant("Reading.", tool_use("bash", "big", command="cat build.log")),
        tool_result("big", output),
    ]
    first = await compactor.plan(_exchange(client))
    assert first.action == "compacted"
    assert 0.7 * LIMIT <= (first.tokens_after or 0) <= LIMIT
    session = compactor._sessions["s"]
    assert session.running is not None
    await asyncio.wait_for(asyncio.shield(session.running), 5)
    assert session.ready is not None
    assert session.head is not None
    # Begun from the head made at once: it keeps that head as it was.
    assert session.ready.core[: len(session.head.core)] == session.head.core
    # The next request passes the splice mark: the head made in the background goes in.
    later = [*client, assistant("The log shows one error."), user("Fix it. " + "detail " * 400)]
    second = await compactor.plan(_exchange(later))
    assert second.action == "applied"
    assert (second.tokens_before or 0) >= 0.85 * LIMIT
    assert (second.tokens_after or 0) < (first.tokens_after or 0)
    assert output not in orjson.dumps(second.messages).decode()


async def test_the_turn_put_before_a_part_that_opens_with_the_assistant_is_not_a_request(
    tokenizer: TiktokenTokenizer,
) -> None:
    """A part after the pinned messages opens with the assistant's turn; the user turn put
    ahead of it for the service is the proxy's, so neither the summary nor the ledger takes
    it for something the user asked."""
    client = _session(12)
    planned = await _compactor(tokenizer).plan(_exchange(client))
    count = pinned(planned.messages, client)
    assert count >= 1
    assert client[count]["role"] == "assistant"
    summary = orjson.dumps(planned.messages[count]).decode()
    assert "[Conversation compressed]" in summary
    assert "Continue" not in summary
    assert "[request]" not in summary  # the session's one request is pinned, as sent


def _one_task(calls: int) -> list[dict[str, Any]]:
    """One request, then only the agent's calls and their results."""
    out = [user("Fix the build of the parser.")]
    for i in range(calls):
        out += [
            assistant(f"Running {i}.", tool_use("bash", f"t{i}", command=f"make {i}")),
            tool_result(f"t{i}", "line of tool output\n" * 60),
        ]
    return out


async def test_a_folded_head_is_summarized_without_its_seam(tokenizer: TiktokenTokenizer) -> None:
    """The `Continue.` after a head that an assistant turn follows is the provider's to
    read; summarized again with the head, it would read as the user's latest request."""
    compactor = _compactor(tokenizer, ProxyPolicy(fold_share=0.0))  # every later one folds
    first_client, later_client = _one_task(12), _one_task(20)
    await compactor.plan(_exchange(first_client))
    head = compactor._sessions["s"].head
    assert head is not None
    assert head.seam
    later = await compactor.plan(_exchange(later_client))
    count = pinned(later.messages, later_client)
    assert _is_summary(later.messages[count])
    assert "Continue" not in orjson.dumps(later.messages[count]).decode()


@pytest.mark.parametrize("fold_share", [0.0, 0.9])
async def test_a_later_compactions_archive_holds_none_of_an_earlier_ones_turns(
    tokenizer: TiktokenTokenizer, fold_share: float
) -> None:
    """Each archive holds what its compaction replaced: a later one the turns after the
    head it kept (with that head's summaries when it folds them), never the turns an
    earlier archive holds, so that deleting an older archive takes nothing from a newer."""
    archive = MemoryArchive()
    ids = iter(f"0000000000000000000{n}-aaaa" for n in range(10))
    service = build_service(
        tokenizer, ExtractiveSummarizer(), archive=archive, new_id=lambda: next(ids)
    )
    compactor = ProxyCompactor(service, service, ProxyPolicy(fold_share=fold_share))
    first = await compactor.plan(_exchange(_session(12)))
    later = await compactor.plan(_exchange(_session(20)))
    assert (first.action, later.action) == ("compacted", "compacted")
    earlier, latest = (_originals(archive.saved[i]) for i in sorted(archive.saved))
    assert (len(earlier) > 3, len(latest) > 3) == (True, True)
    assert earlier & latest == set()


def _originals(archive: Archive) -> set[bytes]:
    """The agent's own messages in an archive, whole (tool call ids included), not the
    service's summaries and acknowledgements, nor the proxy's opening notice."""
    return {
        orjson.dumps(archive.messages[e.message_index], option=orjson.OPT_SORT_KEYS)
        for e in index_archive(archive.messages)
        if not e.digest.startswith(COPY_MARK) and e.text != PART_OPENING
    }
