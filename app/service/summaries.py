"""Summarizing a rest: the prompt, the chunks, the fallback summarizer.

One entry for every strategy (`Summaries.summarize`). A failed summary is None with a
warning, never an exception: the strategy then answers with the input unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from anyio import to_thread

from app.core.errors import SummarizerError
from app.core.facts import ExtractedFacts
from app.core.messages import Message
from app.core.params import SummaryParams
from app.core.ports import Summarizer, SummaryRequest, SummaryTemplate, Tokenizer
from app.core.prompt import (
    SUMMARY_SYSTEM,
    build_archived_prompt,
    build_summary_prompt,
    serialize_for_summary,
)
from app.service.chunked import ChunkedSummary, SummaryOutcome, summarize_in_chunks
from app.service.defaults import Defaults

log = logging.getLogger("context_compact.compaction")


class Summaries:
    """The configured summarizer, its optional fallback, and how a rest reaches them."""

    def __init__(
        self,
        summarizer: Summarizer,
        fallback: Summarizer | None,
        tokenizer: Tokenizer,
        defaults: Defaults,
    ) -> None:
        self.summarizer = summarizer
        self.fallback = fallback
        self.tokenizer = tokenizer
        self.defaults = defaults

    async def summarize(
        self,
        rest: Sequence[Message],
        params: SummaryParams,
        instructions: str | None,
        template: SummaryTemplate = "sections",
        counts: Sequence[int] | None = None,
        facts: ExtractedFacts | None = None,
    ) -> SummaryOutcome:
        """The summary of `rest`, in chunks when its prompt would exceed the input budget.
        `counts`: the token counts of `rest`'s messages when the caller has them; `facts`:
        `rest`'s facts, handed to a summarizer that reads the whole rest at once.

        A summarizer that reads the messages rather than the prompt (`reads_prompt` false:
        the extractive one) has no window, so it always gets the whole rest at once: chunks
        would only make it summarize its own summaries."""
        if not self.summarizer.reads_prompt:
            request = await to_thread.run_sync(
                self.request,
                rest,
                params.max_summary_words,
                instructions,
                template,
                params.file_tools,
                facts,
            )
            return await self._summarize(request)
        return await summarize_in_chunks(
            rest,
            budget=params.summary_input_budget,
            max_words=params.max_summary_words,
            instructions=instructions,
            tokenizer=self.tokenizer,
            build_request=lambda chunk: self.request(
                chunk, params.max_summary_words, instructions, template, params.file_tools
            ),
            summarize=self._summarize,
            counts=counts,
        )

    def request(
        self,
        rest: Sequence[Message],
        max_words: int,
        instructions: str | None,
        template: SummaryTemplate = "sections",
        file_tools: tuple[str, ...] = (),
        facts: ExtractedFacts | None = None,
    ) -> SummaryRequest:
        """What one summarizer call gets. The prompt (larger than the request body) is built
        only when the summarizer or the fallback reads it."""
        build = build_archived_prompt if template == "archived" else build_summary_prompt
        prompt = (
            build(serialize_for_summary(rest), max_words, instructions)
            if self._prompt_is_read()
            else ""
        )
        return SummaryRequest(
            messages=tuple(rest),
            system=SUMMARY_SYSTEM,
            prompt=prompt,
            max_words=max_words,
            instructions=instructions,
            template=template,
            file_tools=file_tools,
            facts=facts,
        )

    def _prompt_is_read(self) -> bool:
        return any(s.reads_prompt for s in (self.summarizer, self.fallback) if s)

    async def _summarize(self, request: SummaryRequest) -> SummaryOutcome:
        """One call's summary and who wrote it; none when every summarizer failed."""
        name = self.summarizer.name
        try:
            return SummaryOutcome(
                ChunkedSummary(await _summary_text(self.summarizer, request), name, 1)
            )
        except SummarizerError as exc:
            log.warning("summarizer failed", extra={"summarizer": name})
            failed = f"summarizer {name} failed: {exc}"
        if self.fallback is None:
            return SummaryOutcome(None, (failed,))
        fallback = self.fallback.name
        try:
            summary = await _summary_text(self.fallback, request)
        except SummarizerError as exc:
            return SummaryOutcome(None, (failed, f"fallback summarizer {fallback} failed: {exc}"))
        written = f"summary written by the fallback summarizer {fallback}"
        return SummaryOutcome(ChunkedSummary(summary, fallback, 1), (failed, written))


async def _summary_text(summarizer: Summarizer, request: SummaryRequest) -> str:
    text = (await summarizer.summarize(request)).strip()
    if not text:  # an empty summary is a failed summary, whoever wrote it
        raise SummarizerError("empty summary", retryable=False)
    return text
