"""`CheckedSummarizer` passes on what its protocol declares: `reads_prompt` and `aclose`."""

from __future__ import annotations

import pytest

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
