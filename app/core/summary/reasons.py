"""The closed vocabulary of reasons a summary fails, and the metrics label of a reason.

Apart from the checks themselves (`app.core.gate.check`, whose rule tables compile many
patterns) so that recording a summarizer's outcome (`app.service.metered`) does not load
them where no LLM summary is checked: the command line with the extractive summarizer.
"""

from __future__ import annotations

from collections.abc import Sequence

# Reasons of content checks (`app.core.gate.check`) and of the adapters' transport failures.
CONTENT_FAILURES = (
    "empty",
    "truncated",
    "refusal",
    "apology",
    "error_message",
    "filtered",
    "oversized",
    "no_sections",
    "reasoning_only",  # reasoning without an answer, or a reasoning block never closed
    "tool_calls",  # the model called a tool instead of answering
    "echo",  # the prompt's instructions (or the whole prompt) back
    "copy",  # the transcript back
    "repetitive",  # a few words repeated
    "missing_sections",  # some of the template's headings absent
    "empty_sections",  # a heading without content, or almost all of them "none"
    "filler",  # sections whose words are not the conversation's
    # Judged against the history (`app.core.gate.truth`):
    "incomplete",  # stops mid-sentence, whatever the provider's stop reason
    "placeholder",  # the template filled with bracketed descriptions
    "incoherent",  # the conversation's words in no order
    "says_nothing",  # a required section states nothing of the conversation
    "foreign",  # too much of it names what the history does not hold
    "uncovered",  # too few of the history's salient facts named
    "misleading",  # most of its sentences claim what the evidence contradicts
    "stale",  # the user's latest request left out of its goals and status
)
TRANSPORT_FAILURES = (
    "timeout",  # one attempt past the summary timeout
    "deadline",  # all attempts together past the summary deadline
    "connection",
    "rate_limited",  # 429
    "server_error",  # 5xx, 408, 409
    "client_error",  # any other 4xx
    "bad_response",  # a 200 that is not a completion
)
SUMMARY_FAILURES = CONTENT_FAILURES + TRANSPORT_FAILURES


def known_reason(reason: str | None, vocabulary: Sequence[str] = SUMMARY_FAILURES) -> str:
    """A metrics label: the reason when it is in the vocabulary, else `other` (a fake or
    a future adapter must not create a series per message)."""
    return reason if reason is not None and reason in vocabulary else "other"
