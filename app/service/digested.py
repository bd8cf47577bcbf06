"""The request of the digest path (`app.core.digest`): notes within a share of the
history's tokens and the fill-in prompt, instead of the whole transcript.

Built in a worker thread (it counts tokens). The request still carries the whole rest as
`messages`, so the extractive fallback summarizes the same history as ever.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.digest import DIGEST_SYSTEM, build_digest, build_digest_prompt, digest_budget
from app.core.facts import ExtractedFacts, extract_facts
from app.core.messages import Message
from app.core.params import SummaryParams
from app.core.ports import SummaryRequest, Tokenizer
from app.core.tokens import count_messages


def digest_request(
    rest: Sequence[Message],
    params: SummaryParams,
    instructions: str | None,
    tokenizer: Tokenizer,
    counts: Sequence[int] | None = None,
    facts: ExtractedFacts | None = None,
) -> SummaryRequest:
    """One summarizer call over `rest`'s digest; `counts` and `facts` when already made."""
    facts = facts if facts is not None else extract_facts(rest, params.vocabulary)
    history = sum(counts if counts is not None else count_messages(tokenizer, rest))
    max_words = params.max_summary_words
    overhead = tokenizer.count(DIGEST_SYSTEM) + tokenizer.count(
        build_digest_prompt("", max_words, instructions)
    )
    budget = digest_budget(history, params.summary_input_budget, overhead)
    digest = build_digest(rest, facts, budget, tokenizer.count)
    return SummaryRequest(
        messages=tuple(rest),
        system=DIGEST_SYSTEM,
        prompt=build_digest_prompt(digest, max_words, instructions),
        max_words=max_words,
        instructions=instructions,
        template="digest",
        file_tools=params.file_tools,
        facts=facts,
    )
