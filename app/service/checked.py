"""A summarizer whose answers are checked before anyone uses them.

Wrapped around the LLM summarizer (its retry loop included) in `app.main`, so every
strategy, chunked summaries and background jobs get checked text without knowing it: a
text that `app.core.summary_check` rejects (a refusal, an error message, an echo, filler,
an oversized or unstructured answer) leaves here as a `SummarizerError` with its reason,
and the pipeline's usual failure path runs (the extractive fallback, else
`summarization_failed`); an accepted one leaves cleaned (no reasoning, no template tokens).
The check counts tokens and reads the transcript, so it runs in a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable

from anyio import to_thread

from app.core.errors import SummarizerError
from app.core.ports import Summarizer, SummaryRequest
from app.core.summary_check import accept_summary, source_of


class CheckedSummarizer:
    """`inner`'s summaries, each checked against `request.template`'s headings and a cap
    of `cap_tokens` tokens counted by `count`."""

    def __init__(self, inner: Summarizer, *, cap_tokens: int, count: Callable[[str], int]):
        self._inner = inner
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
            raise verdict
        return verdict

    def _judge(self, text: str, request: SummaryRequest) -> str | SummarizerError:
        return accept_summary(
            text,
            template=request.template,
            cap_tokens=self._cap_tokens,
            count=self._count,
            source=source_of(request),
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
