"""The fields that set the threshold decision, taken the same way by every route: one body,
every route. A body sent to `/should-compact` and then to `/compact` (or a job, or the
command line) is decided on the same window whether it says `context_window` at the top
level or in `options`; the same field given both ways with two values is a 422 naming it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.api.provider import invalid
from app.core.options import CompactOptions

SHARED = ("context_window", "threshold", "min_messages")


class DecisionFields(BaseModel):
    """`context_window`, `threshold` and `min_messages` at the top level, as
    `options.<name>` (either; the same value if both)."""

    context_window: int | None = Field(
        None,
        gt=0,
        description=(
            "The model's window in tokens (as `options.context_window`). Defaults to the "
            "`model`'s, else the server's."
        ),
    )
    threshold: float | None = Field(
        None, gt=0, le=1, description="As `options.threshold`. Defaults to the server's."
    )
    min_messages: int | None = Field(
        None, ge=0, description="As `options.min_messages`. Defaults to the server's."
    )

    def decision_value(self, name: str, options: CompactOptions) -> Any:
        """The field's value, top level or in `options`; a 422 when they differ."""
        top, inner = getattr(self, name), getattr(options, name)
        if top is not None and inner is not None and top != inner:
            raise invalid(name, f"`{name}` ({top}) and `options.{name}` ({inner}) differ: give one")
        return top if top is not None else inner

    def with_decision_fields(self, options: CompactOptions) -> CompactOptions:
        """`options` holding the top-level fields too."""
        update = {
            n: self.decision_value(n, options) for n in SHARED if getattr(self, n) is not None
        }
        return options.model_copy(update=update) if update else options
