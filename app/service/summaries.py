"""Summarizing a rest: the prompt, the chunks, the fallback summarizer.

One entry for every strategy (`Summaries.summarize`). A failed summary is an outcome
without a summary, with its warnings, never an exception: the strategy then answers with
the input unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from functools import partial

from anyio import to_thread

from app.core.cost import SummarizerCost
from app.core.errors import SummarizerError
from app.core.history import ExtractedFacts
from app.core.messages import Message
from app.core.options import SummaryParams
from app.core.ports import Summarizer, SummaryRequest, SummaryTemplate, Tokenizer, WindowSource
from app.core.summary import (
    SUMMARY_SYSTEM,
    Judged,
    Trimmed,
    build_archived_prompt,
    build_summary_prompt,
    digest_summary,
    fit_warning,
    fitted_budget,
    serialize_for_summary,
    warnings_of,
)
from app.service.chunked import (
    ChunkedInput,
    ChunkedSummary,
    SummaryOutcome,
    summarize_in_chunks,
)
from app.service.defaults import Defaults
from app.service.digested import digest_requests
from app.service.summary_cache import SummaryCache, reuse_scope, summary_key
from app.service.summary_cost import charge, charged, known_counts

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
        self.answers = SummaryCache()  # what the summarizers answered, by their input
        self._summarizer = summarizer
        self.fallback = fallback
        self.tokenizer = tokenizer
        self.defaults = defaults
        # The LLM server's window, when it reports one: budgets are fitted to it.
        self.window: WindowSource | None = None
        self.answer_tokens = 0

    @property
    def summarizer(self) -> Summarizer:
        return self._summarizer

    @summarizer.setter
    def summarizer(self, summarizer: Summarizer) -> None:
        """Another summarizer (tests and the command line swap it): its own answers."""
        self._summarizer = summarizer
        self.answers = SummaryCache()

    async def summarize(
        self,
        rest: Sequence[Message],
        params: SummaryParams,
        instructions: str | None,
        template: SummaryTemplate = "sections",
        counts: Sequence[int] | None = None,
        facts: ExtractedFacts | None = None,
    ) -> SummaryOutcome:
        """`_summarize_rest`, each call's input counted from `counts` when given."""
        with known_counts(rest, counts):
            return await self._summarize_rest(rest, params, instructions, template, counts, facts)

    async def _summarize_rest(
        self,
        rest: Sequence[Message],
        params: SummaryParams,
        instructions: str | None,
        template: SummaryTemplate = "sections",
        counts: Sequence[int] | None = None,
        facts: ExtractedFacts | None = None,
    ) -> SummaryOutcome:
        """The summary of `rest`: from its digest in one call on the digest path
        (`app.core.summary.digest`), else in chunks when its prompt would exceed the input budget.
        `counts`: the token counts of `rest`'s messages when the caller has them; `facts`:
        `rest`'s facts, handed to a summarizer that reads the whole rest at once.

        A summarizer that reads the messages rather than the prompt (`reads_prompt` false:
        the extractive one) has no window, so it always gets the whole rest at once: chunks
        would only make it summarize its own summaries."""
        params, fitted = await self._fitted(params)
        if self._digests(template):
            read, requests = await to_thread.run_sync(
                digest_requests, rest, params, instructions, self.tokenizer, counts, facts
            )
            outcome = await self._answers(rest, read, requests)
            return SummaryOutcome(outcome.summary, fitted + outcome.warnings, outcome.calls)
        if not self.summarizer.reads_prompt:
            request = await self._whole(rest, params, instructions, template, facts)
            outcome = await self._summarize(request)
            return SummaryOutcome(outcome.summary, fitted + outcome.warnings, outcome.calls)
        given = ChunkedInput(
            rest, params.summary_input_budget, params.max_summary_words, instructions, counts
        )
        outcome = await summarize_in_chunks(
            given,
            tokenizer=self.tokenizer,
            build_request=lambda chunk: self.request(
                chunk, params.max_summary_words, instructions, template, params.file_tools
            ),
            summarize=self._primary,  # a failed chunk goes to `fall_back`, not per chunk
            fall_back=None
            if self.fallback is None
            else lambda: self._whole_by_fallback(rest, params, instructions, template, facts),
        )
        return SummaryOutcome(outcome.summary, fitted + outcome.warnings, outcome.calls)

    async def _answers(
        self, rest: Sequence[Message], facts: ExtractedFacts, requests: Sequence[SummaryRequest]
    ) -> SummaryOutcome:
        """The digest path: the model's answer to each section's question, laid out with the
        service's sections (`digest_summary`); once one call fails, the fallback summarizes
        the whole rest and no further call is made."""
        answers: dict[str, str] = {}
        warnings: list[str] = []
        for calls, request in enumerate(requests, 1):
            written = await self._primary(request)
            if written.summary is None:
                fallen = await self._fall_back(request)
                summary = replace(fallen.summary, chunks=calls) if fallen.summary else None
                return SummaryOutcome(summary, written.warnings + fallen.warnings, calls)
            answers[request.section or ""] = written.summary.text
            warnings.extend(written.warnings)
        text = await to_thread.run_sync(digest_summary, answers, rest, facts)
        calls = len(requests)
        summary = ChunkedSummary(text, self.summarizer.name, calls)
        return SummaryOutcome(summary, tuple(warnings), calls)

    async def _whole_by_fallback(
        self,
        rest: Sequence[Message],
        params: SummaryParams,
        instructions: str | None,
        template: SummaryTemplate,
        facts: ExtractedFacts | None,
    ) -> SummaryOutcome:
        """The fallback's summary of the whole rest, after the summarizer failed a chunk."""
        return await self._fall_back(await self._whole(rest, params, instructions, template, facts))

    async def _whole(
        self,
        rest: Sequence[Message],
        params: SummaryParams,
        instructions: str | None,
        template: SummaryTemplate,
        facts: ExtractedFacts | None,
    ) -> SummaryRequest:
        """The one request for the whole rest, built in a worker thread."""
        return await to_thread.run_sync(
            self.request,
            rest,
            params.max_summary_words,
            instructions,
            template,
            params.file_tools,
            facts,
        )

    async def _fitted(self, params: SummaryParams) -> tuple[SummaryParams, tuple[str, ...]]:
        """`params` with its input budget lowered to the server's window, if it says one,
        and the warning that says so."""
        if self.window is None or not self.summarizer.reads_prompt:
            return params, ()
        window = await self.window.window()
        ratio = await self.window.ratio() if window is not None else None
        budget = params.summary_input_budget
        fitted = fitted_budget(budget, window, self.answer_tokens, ratio)
        if window is None or fitted == budget:
            return params, ()
        return replace(params, summary_input_budget=fitted), (fit_warning(budget, fitted, window),)

    def _digests(self, template: SummaryTemplate) -> bool:
        """The digest path: configured, for an LLM, and for the five-section summary (the
        `tail` strategy's archive template keeps the transcript)."""
        return (
            self.defaults.summary_mode == "digest"
            and template == "sections"
            and self.summarizer.reads_prompt
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
            build(serialize_for_summary(rest, clip=True), max_words, instructions)
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
        primary = await self._primary(request)
        if primary.summary is not None or self.fallback is None:
            return primary
        fallen = await self._fall_back(request)
        return SummaryOutcome(fallen.summary, primary.warnings + fallen.warnings, primary.calls)

    async def _primary(self, request: SummaryRequest) -> SummaryOutcome:
        """The configured summarizer's summary; none (with a warning) when it failed."""
        name = self.summarizer.name
        try:
            text = await self._text(self.summarizer, request)
            return SummaryOutcome(ChunkedSummary(text, name, 1), warnings_of(text), calls=1)
        except SummarizerError as exc:
            said = f"summarizer {name} failed: {exc}"
            log.warning(said, extra=_why(name, exc))
            return SummaryOutcome(None, (said,), calls=1)

    async def _fall_back(self, request: SummaryRequest) -> SummaryOutcome:
        if self.fallback is None:
            return SummaryOutcome(None)
        fallback = self.fallback.name
        try:
            summary = await self._text(self.fallback, request)
        except SummarizerError as exc:
            said = f"fallback summarizer {fallback} failed: {exc}"
            log.warning(said, extra=_why(fallback, exc))
            return SummaryOutcome(None, (said,))
        written = f"summary written by the fallback summarizer {fallback}"
        return SummaryOutcome(ChunkedSummary(summary, fallback, 1), (written,))

    async def _text(self, summarizer: Summarizer, request: SummaryRequest) -> str:
        """`summarizer`'s summary of `request`, its cost charged to the compaction; the
        answer of an earlier call of the same input when there is one (no call made)."""
        reads, scope = summarizer.reads_prompt, reuse_scope()
        call = partial(_summary_text, summarizer, request)
        if scope is None:
            return await charged(self.tokenizer, request, reads, call)
        key = await to_thread.run_sync(summary_key, scope, summarizer.name, reads, request)
        answer = self.answers.get(key)
        if answer is not None:
            charge(SummarizerCost(reused=1))
            return answer
        answer = await charged(self.tokenizer, request, reads, call)
        self.answers.put(key, answer)
        return answer


def _why(name: str, error: SummarizerError) -> dict[str, object]:
    """A failure's log fields: who, its reason, and the last error (the adapters' messages
    carry a status, a class name or the server's short message: never a key or the prompt)."""
    return {"summarizer": name, "reason": error.reason, "error": str(error.args[0])}


async def _summary_text(summarizer: Summarizer, request: SummaryRequest) -> str:
    """The summary, stripped, still carrying the gate's warnings (`warnings_of`): `strip`
    of a `Trimmed` is a plain `str` even when nothing was stripped, so the warnings are
    carried over every time."""
    answer = await summarizer.summarize(request)
    text = answer.strip()
    if not text:  # an empty summary is a failed summary, whoever wrote it
        raise SummarizerError("empty summary", retryable=False)
    warnings = warnings_of(answer)
    return Trimmed.of(Judged(text, warnings)) if warnings else text
