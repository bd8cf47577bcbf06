"""What a provider request reserves for its answer: the output budget the window must
leave room for, read from whichever field the request's API names it by."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OUTPUT_FIELDS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
"""Where a provider request asks for its output budget: Anthropic Messages and the older
OpenAI Chat `max_tokens`, OpenAI Chat `max_completion_tokens`, OpenAI Responses
`max_output_tokens`."""


@dataclass(frozen=True)
class OutputBudget:
    """The output a request reserves (`max_tokens`, `max_completion_tokens` or
    `max_output_tokens`), and the field it was read from (None: none sent)."""

    tokens: int = 0
    field: str | None = None


def output_budget(fields: Mapping[str, Any]) -> OutputBudget:
    """The output a provider request reserves: the largest of its output fields (a request
    that sends two is read by the larger, erring high)."""
    sent = [
        (value, name)
        for name in OUTPUT_FIELDS
        if isinstance(value := fields.get(name), int) and not isinstance(value, bool) and value > 0
    ]
    if not sent:
        return OutputBudget()
    tokens, name = max(sent, key=lambda pair: pair[0])
    return OutputBudget(tokens, name)
