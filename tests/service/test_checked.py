"""`CheckedSummarizer` passes on what its protocol declares (`reads_prompt`, `aclose`),
returns an accepted answer cleaned, and judges it against the request's own conversation
and instructions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from app.service.checked import CheckedSummarizer
from tests.core.summary.test_digest import _digest_source, session
from tests.summary_answers import SUMMARY, request

pytestmark = pytest.mark.anyio


class Inner:
    name = "inner"

    def __init__(self, reads_prompt: bool) -> None:
        self.reads_prompt = reads_prompt
        self.closed = 0

    async def summarize(self, request: SummaryRequest) -> str:
        return "## Goals\nDone."

    async def aclose(self) -> None:
        self.closed += 1


@pytest.mark.parametrize("reads_prompt", [True, False])
async def test_the_wrapper_says_what_its_summarizer_reads_and_closes_it(
    reads_prompt: bool,
) -> None:
    inner = Inner(reads_prompt)
    checked = CheckedSummarizer(inner, cap_tokens=100, count=len)
    assert checked.reads_prompt is reads_prompt
    assert checked.name == "inner"
    await checked.aclose()
    assert inner.closed == 1


class Answering:
    name = "llm"
    reads_prompt = True

    def __init__(self, text: str) -> None:
        self.text = text

    async def summarize(self, request: SummaryRequest) -> str:
        return self.text

    async def aclose(self) -> None:
        pass


def words(text: str) -> int:
    return len(text.split())


async def test_an_accepted_answer_is_returned_cleaned() -> None:
    checked = CheckedSummarizer(
        Answering(f"<think>\nfive sections\n</think>\n{SUMMARY}<|im_end|>"),
        cap_tokens=1000,
        count=words,
    )
    assert await checked.summarize(request()) == SUMMARY.strip()


async def test_the_check_reads_the_requests_conversation_and_instructions() -> None:
    """The same line is a quote of this conversation and a refusal in another; the
    instructions given back are an echo."""
    quoting = SUMMARY.replace(
        "## File Operations", "I'm sorry, I can't help with that.\n## File Operations"
    )
    checked = CheckedSummarizer(Answering(quoting), cap_tokens=1000, count=words)
    assert await checked.summarize(request()) == quoting.strip()
    other = replace(request(), messages=request().messages[1:])
    with pytest.raises(SummarizerError) as refused:
        await checked.summarize(other)
    assert refused.value.reason == "refusal"
    echoing = CheckedSummarizer(Answering(request().prompt), cap_tokens=10_000, count=words)
    with pytest.raises(SummarizerError) as echoed:
        await echoing.summarize(request())
    assert echoed.value.reason == "echo"


@pytest.mark.parametrize("log_rejected", [True, False])
async def test_a_rejected_answers_first_line_is_logged_only_when_configured(
    caplog: pytest.LogCaptureFixture, log_rejected: bool
) -> None:
    copy = "\n\n**[user]** please fix " + "x" * 300 + "\n[assistant]\nsure"
    checked = CheckedSummarizer(
        Answering(copy), cap_tokens=1000, count=len, log_rejected=log_rejected
    )
    with pytest.raises(SummarizerError):
        await checked.summarize(request())
    records = [r for r in caplog.records if r.getMessage() == "summary rejected"]
    if not log_rejected:
        assert records == []
        return
    (record,) = records
    assert record.__dict__["reason"] == "copy"  # the transcript's `[assistant]` line
    assert record.__dict__["first_line"] == ("[user]** please fix " + "x" * 300)[:120]


async def test_an_accepted_answer_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    checked = CheckedSummarizer(Answering(SUMMARY), cap_tokens=1000, count=words, log_rejected=True)
    assert await checked.summarize(request()) == SUMMARY.strip()
    assert not [r for r in caplog.records if r.getMessage() == "summary rejected"]


async def test_an_answer_to_one_sections_question_is_judged_under_its_heading() -> None:
    """The digest path: the answer is a section's body; the check supplies the heading and
    asks for that section only, and what comes back is the body, cleaned."""
    asked, _ = _digest_source(session())
    body = "<think>short</think>The token names both work; next the whole suite runs."
    checked = CheckedSummarizer(Answering(body), cap_tokens=1000, count=words)
    assert await checked.summarize(asked) == (
        "The token names both work; next the whole suite runs."
    )
    notes = asked.prompt.split("</notes>")[0].removeprefix("<notes>\n")
    copying = CheckedSummarizer(Answering(notes), cap_tokens=10_000, count=words)
    with pytest.raises(SummarizerError) as copied:
        await copying.summarize(asked)
    assert copied.value.reason in {"copy", "repetitive"}
