"""What a good LLM answers: a real summary of the messages it was sent, for fake servers.

The summary check (`app.core.summary.check`) accepts only an answer that has every section
of its template, each saying something about the conversation; the extractive summary of
the same messages is such a text, so fakes answer with it (plus a `marker` line a test can
look for) instead of a one-line stand-in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.core.summary.extractive import extract_archived, extract_summary
from tests.builders import parse


def llm_summary(
    messages: Sequence[dict[str, Any]], *, template: str = "sections", marker: str = ""
) -> str:
    """A summary of `messages` (system messages aside) in `template`'s sections, `marker`
    as the first line of its first section."""
    parsed = parse([m for m in messages if m.get("role") != "system"])
    render = extract_archived if template == "archived" else extract_summary
    text = render(parsed, 1200)
    if not marker:
        return text
    heading, rest = text.split("\n", 1)
    return f"{heading}\n- {marker}\n{rest}"
