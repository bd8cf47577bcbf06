"""One summarizer call per head: a finished background head that still serves keeps a new
compaction from beginning at every request between the start and splice marks, and a
fold merges the previous summary with what came after it, never the turns it stands for
again. Counted with a counting fake summarizer."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import ModelSpec
from app.core.ports import SummaryRequest
from app.core.summary import ExtractiveSummarizer, serialize_for_summary
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import Exchange, ProxyPolicy
from tests.builders import FakeSummarizer, assistant, build_service, user
from tests.proxy.test_app import _tokens, long_session

pytestmark = pytest.mark.anyio

ANSWER = "## Goals & Decisions\nFix the parser build."


def _exchange(messages: list[dict[str, Any]], spec: ModelSpec, limit: int) -> Exchange:
    body = {"model": "claude-tiny", "max_tokens": 100, "messages": messages}
    return Exchange("anthropic", "s", body, spec, limit, len(orjson.dumps(body)))


async def _settled(compactor: ProxyCompactor) -> None:
    session = compactor._sessions["s"]
    for task in (session.running, session.spare):
        if task is not None:
            await asyncio.wait({task}, timeout=5)


async def test_no_compaction_begins_again_while_a_finished_head_serves(
    tokenizer: TiktokenTokenizer,
) -> None:
    summarizer = FakeSummarizer(lambda r: ANSWER)
    background = build_service(tokenizer, summarizer)
    immediate = build_service(tokenizer, ExtractiveSummarizer())
    compactor = ProxyCompactor(background, immediate, ProxyPolicy(pin_share=0.0))
    measured = ProxyCompactor(immediate, immediate)
    start = long_session(8)
    # The window puts the first request just past the start mark.
    window = int(await _tokens(measured, start) / 0.72) + 100
    spec = ModelSpec(context_window=window, tokenizer="tiktoken", margin=0.0)
    limit = window - 100
    first = await compactor.plan(_exchange(start, spec, limit))
    assert first.action == "precompact_started"
    await _settled(compactor)
    assert compactor._sessions["s"].ready is not None
    client, actions = start, []
    for turn in range(3):  # short turns between the start and the splice marks
        client = [*client, assistant(f"Checked {turn}."), user(f"Next check {turn}.")]
        planned = await compactor.plan(_exchange(client, spec, limit))
        actions.append(planned.action)
        await _settled(compactor)
        assert 0.7 * limit <= (planned.tokens_before or 0) < 0.85 * limit
    assert actions == ["none", "none", "none"]
    assert len(summarizer.requests) == 1


async def test_a_fold_merges_the_summary_with_what_came_after_it(
    tokenizer: TiktokenTokenizer,
) -> None:
    summaries = iter(["## Goals & Decisions\nFIRST SUMMARY.", "## Goals & Decisions\nSECOND."])
    summarizer = FakeSummarizer(lambda r: next(summaries))
    service = build_service(tokenizer, summarizer)
    compactor = ProxyCompactor(service, service, ProxyPolicy(fold_share=0.0))
    spec = ModelSpec(context_window=4000, tokenizer="tiktoken", margin=0.0)
    first_client, later_client = long_session(12), long_session(20)
    first = await compactor.plan(_exchange(first_client, spec, 3900))
    head = compactor._sessions["s"].head
    assert first.action == "compacted"
    assert head is not None
    later = await compactor.plan(_exchange(later_client, spec, 3900))
    assert later.action == "compacted"
    first_request, fold = summarizer.requests
    folded = serialize_for_summary(fold.messages)
    assert "FIRST SUMMARY." in folded
    # None of the turns the first head stands for is read again (past the pinned ones).
    replaced = serialize_for_summary(first_request.messages)
    said = [f"Running {i}." for i in range(1, 21) if f"Running {i}." in replaced]
    assert len(said) >= 3
    assert not [text for text in said if text in folded]

    # What does not change across the session's compactions comes first in the prompt.
    def opening(request: SummaryRequest) -> str:
        return request.system + request.prompt.split("<conversation>")[0]

    assert opening(fold) == opening(first_request)


async def test_a_finished_head_begun_below_the_start_mark_gives_way_to_a_new_one(
    tokenizer: TiktokenTokenizer,
) -> None:
    """A head begun below the start mark (for a large turn the session's pace foresaw) was
    made for a turn that did not come: past the start mark a compaction begins afresh."""
    summarizer = FakeSummarizer(lambda r: ANSWER)
    background = build_service(tokenizer, summarizer)
    immediate = build_service(tokenizer, ExtractiveSummarizer())
    compactor = ProxyCompactor(background, immediate, ProxyPolicy(pin_share=0.0))
    measured = ProxyCompactor(immediate, immediate)
    start = long_session(8)
    window = int(await _tokens(measured, start) / 0.72) + 100
    spec = ModelSpec(context_window=window, tokenizer="tiktoken", margin=0.0)
    limit = window - 100
    await compactor.plan(_exchange(start, spec, limit))
    await _settled(compactor)
    session = compactor._sessions["s"]
    assert session.ready is not None
    session.running_tokens = int(0.6 * limit)  # as if begun below the start mark
    client = [*start, assistant("Checked."), user("Next check.")]
    ex = _exchange(client, spec, limit)
    # Turns of a twentieth of the limit, two a compaction: three reach the splice mark.
    session.pace.sizes = [ex.size - 3 * int(0.05 * limit)]
    session.pace.compaction_seconds = None
    planned = await compactor.plan(ex)
    assert planned.action == "precompact_started"
    await _settled(compactor)
    assert len(summarizer.requests) == 2
