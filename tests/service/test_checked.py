"""`CheckedSummarizer` passes on what its protocol declares: `reads_prompt` and `aclose`."""

from __future__ import annotations

import pytest

from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from app.service.checked import CheckedSummarizer

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


class Answers:
    name = "inner"
    reads_prompt = True

    def __init__(self, text: str) -> None:
        self.text = text

    async def summarize(self, request: SummaryRequest) -> str:
        return self.text

    async def aclose(self) -> None:
        """Nothing to close."""


REQUEST = SummaryRequest(messages=(), system="s", prompt="p", max_words=100)


@pytest.mark.parametrize("log_rejected", [True, False])
async def test_a_rejected_answers_first_line_is_logged_only_when_configured(
    caplog: pytest.LogCaptureFixture, log_rejected: bool
) -> None:
    copy = "\n\n**[user]** please fix " + "x" * 300 + "\n[assistant]\nsure"
    checked = CheckedSummarizer(
        Answers(copy), cap_tokens=1000, count=len, log_rejected=log_rejected
    )
    with pytest.raises(SummarizerError):
        await checked.summarize(REQUEST)
    records = [r for r in caplog.records if r.getMessage() == "summary rejected"]
    if not log_rejected:
        assert records == []
        return
    (record,) = records
    assert record.__dict__["reason"] == "no_sections"
    assert record.__dict__["first_line"] == ("[user]** please fix " + "x" * 300)[:120]


async def test_an_accepted_answer_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    checked = CheckedSummarizer(
        Answers("## Goals & Decisions\n- x"), cap_tokens=1000, count=len, log_rejected=True
    )
    assert await checked.summarize(REQUEST) == "## Goals & Decisions\n- x"
    assert not [r for r in caplog.records if r.getMessage() == "summary rejected"]
