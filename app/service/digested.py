"""The requests of the digest path (`app.core.summary.digest`): notes within a share of the
history's tokens and one question per narrative section, instead of the whole transcript.

Built in a worker thread (it counts tokens). Each request still carries the whole rest as
`messages`, so the extractive fallback summarizes the same history as ever.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.history import ExtractedFacts, extract_facts
from app.core.messages import Message
from app.core.options import SummaryParams
from app.core.ports import SummaryRequest, Tokenizer
from app.core.summary import (
    DIGEST_SYSTEM,
    MODEL_SECTIONS,
    build_digest,
    build_section_prompt,
    digest_budget,
)
from app.core.tokens import count_messages


def digest_requests(
    rest: Sequence[Message],
    params: SummaryParams,
    instructions: str | None,
    tokenizer: Tokenizer,
    counts: Sequence[int] | None = None,
    facts: ExtractedFacts | None = None,
) -> tuple[ExtractedFacts, tuple[SummaryRequest, ...]]:
    """`rest`'s facts, and one summarizer call per section the model writes, over `rest`'s
    digest; `counts` and `facts` when already made."""
    facts = facts if facts is not None else extract_facts(rest, params.vocabulary)
    history = sum(counts if counts is not None else count_messages(tokenizer, rest))
    overhead = tokenizer.count(DIGEST_SYSTEM) + max(
        tokenizer.count(build_section_prompt("", section, instructions))
        for section in MODEL_SECTIONS
    )
    budget = digest_budget(history, params.summary_input_budget, overhead)
    digest = build_digest(rest, facts, budget, tokenizer.count)
    return facts, tuple(
        SummaryRequest(
            messages=tuple(rest),
            system=DIGEST_SYSTEM,
            prompt=build_section_prompt(digest, section, instructions),
            max_words=params.max_summary_words,
            instructions=instructions,
            template="digest",
            file_tools=params.file_tools,
            facts=facts,
            section=section,
        )
        for section in MODEL_SECTIONS
    )
