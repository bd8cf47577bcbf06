"""`full` keeps the user's new request last, as sent, while it is a small part of the
context; a request over `KEPT_TURN_SHARE` of the threshold is summarized with the rest
(kept, the compacted list would stay near the threshold and the next call go over)."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.options.compact import CompactOptions
from app.service.compaction import CompactRequest
from app.service.strategies.full import KEPT_TURN_SHARE
from tests.builders import FakeSummarizer, assistant, build_service, parse, system, user
from tests.fakes.tokenizer import WordTokenizer

pytestmark = pytest.mark.anyio
WINDOW = 4000
THRESHOLD = 0.5


def history(request_words: int) -> list[dict[str, Any]]:
    raw: list[dict[str, Any]] = [system("s")]
    for k in range(20):
        raw += [user(f"step {k} " + "word " * 60), assistant(f"done {k} " + "word " * 60)]
    return [*raw, user("now " + "please " * (request_words - 1))]


async def compact(raw: list[dict[str, Any]]) -> Any:
    service = build_service(WordTokenizer(), FakeSummarizer(lambda r: "## Goals\n- the work"))
    options = CompactOptions(context_window=WINDOW, threshold=THRESHOLD)
    return await service.compact(CompactRequest(messages=parse(raw), options=options))


async def test_a_new_request_within_the_share_stays_last_as_sent() -> None:
    raw = history(40)
    result = await compact(raw)
    assert result.compacted is True
    assert result.messages[-1].content == raw[-1]["content"]
    assert len(result.messages) == 4  # system, summary, acknowledgement, the request


async def test_a_new_request_over_the_share_is_summarized_and_the_list_shrinks() -> None:
    largest_kept = int(KEPT_TURN_SHARE * THRESHOLD * WINDOW)
    raw = history(largest_kept + 50)
    result = await compact(raw)
    assert result.compacted is True
    assert result.messages[-1].role == "assistant"  # the acknowledgement
    assert all(m.content != raw[-1]["content"] for m in result.messages)
    assert result.stats.compacted_token_count < THRESHOLD * WINDOW * KEPT_TURN_SHARE
