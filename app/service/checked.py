"""A summarizer whose answers are checked before anyone uses them.

Wrapped around the LLM summarizer (its retry loop included) in `app.main`, so every
strategy, chunked summaries and background jobs get checked text without knowing it: a
text that `app.core.summary.check` rejects (a refusal, an error message, an echo, filler,
an oversized or unstructured answer) leaves here as a `SummarizerError` with its reason,
and the pipeline's usual failure path runs (the extractive fallback, else
`summarization_failed`); an accepted one leaves cleaned (no reasoning, no template tokens).
The check counts tokens and reads the transcript, so it runs in a worker thread.
With `log_rejected` (`COMPACT_LOG_REJECTED_SUMMARIES`, off: an answer may quote the history)
the first line of a rejected answer is logged, to see what a model wrote instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from anyio import to_thread

from app.core.errors import SummarizerError
from app.core.ports import Summarizer, SummaryRequest
from app.core.summary import accept_summary, opening, source_of

log = logging.getLogger("context_compact.summarizer")
FIRST_LINE_CHARS = 120


class CheckedSummarizer:
    """`inner`'s summaries, each checked against `request.template`'s headings and a cap
    of `cap_tokens` tokens counted by `count`."""

    def __init__(
        self,
        inner: Summarizer,
        *,
        cap_tokens: int,
        count: Callable[[str], int],
        log_rejected: bool = False,
    ):
        self._inner = inner
        self._log_rejected = log_rejected
        self._cap_tokens = cap_tokens
        self._count = count

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def reads_prompt(self) -> bool:
        return self._inner.reads_prompt

    async def summarize(self, request: SummaryRequest) -> str:
        text = await self._inner.summarize(request)
        verdict = await to_thread.run_sync(self._judge, text, request)
        if isinstance(verdict, SummarizerError):
            if self._log_rejected:
                log.warning(
                    "summary rejected",
                    extra={
                        "reason": verdict.reason,
                        "first_line": opening(text)[:FIRST_LINE_CHARS],
                    },
                )
            raise verdict
        return verdict

    def _judge(self, text: str, request: SummaryRequest) -> str | SummarizerError:
        """The answer cleaned, or why not. The answer to one section's question (the digest
        path) is judged under that section's heading, the only one required; the body is
        what is kept."""
        heading = f"## {request.section}\n" if request.section else ""
        verdict = accept_summary(
            heading + text,
            template=request.template,
            cap_tokens=self._cap_tokens,
            count=self._count,
            source=source_of(request),
            sections=(request.section,) if request.section else None,
        )
        if isinstance(verdict, str) and heading:
            return verdict.removeprefix(heading.rstrip("\n")).strip()
        return verdict

    async def aclose(self) -> None:
        await self._inner.aclose()
