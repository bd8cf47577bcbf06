"""A summary text that carries the gate's warnings to whoever uses it.

A `Summarizer` returns text; the summary gate (`app.core.gate.truth`) may have dropped
sentences of it, which the answer's `warnings` must say. Apart from the gate so that the
service reads them (`warnings_of`) without loading the gate's rules where no LLM summary
is checked (the command line with the extractive summarizer).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Judged:
    """The text to use as the summary, and what the gate says about it."""

    text: str
    warnings: tuple[str, ...] = ()


class Trimmed(str):
    """A summary text with the gate's warnings about it."""

    warnings: tuple[str, ...] = ()

    @classmethod
    def of(cls, judged: Judged) -> Trimmed:
        text = cls(judged.text)
        text.warnings = judged.warnings
        return text


def warnings_of(text: str) -> tuple[str, ...]:
    """The gate's warnings about `text`, if it carries any."""
    return text.warnings if isinstance(text, Trimmed) else ()
