"""How near a proxied request is to its model's limit, and what the proxy does about it.

The limit is what the provider accepts as input: the model's input limit, less the output
budget the request asks for (`max_tokens`, `max_completion_tokens`, `max_output_tokens`),
since the provider refuses input + output over the window. Three marks on it: at `start`
(70%) a compaction begins in the background; at `splice` (85%) a finished one is put in;
at 100% the request cannot go as it is: a running compaction is waited for briefly, else
one is made at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from app.core.provider import output_budget as reserved

Stage = Literal["below", "start", "splice", "over"]


@dataclass(frozen=True)
class Marks:
    """Shares of the limit: begin a compaction in the background, put a finished one in."""

    start: float = 0.70
    splice: float = 0.85

    def __post_init__(self) -> None:
        if not 0 < self.start <= self.splice <= 1:
            raise ValueError("the marks must satisfy 0 < start <= splice <= 1")


def output_budget(body: Mapping[str, Any]) -> int:
    """The output the request reserves (0 when it names none), read as the decision of the
    service's routes reads it (`app.core.provider.output_budget`)."""
    return reserved(body).tokens


def input_limit(window: int, max_input: int | None, body: Mapping[str, Any]) -> int:
    """The input the provider accepts with this request's output budget (at least 1)."""
    limit = window - output_budget(body)
    if max_input is not None:
        limit = min(limit, max_input)
    return max(1, limit)


def stage(tokens: int, limit: int, marks: Marks) -> Stage:
    if tokens > limit:
        return "over"
    if tokens >= marks.splice * limit:
        return "splice"
    if tokens >= marks.start * limit:
        return "start"
    return "below"
