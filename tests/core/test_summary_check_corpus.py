"""Real summaries of real sessions pass the summary check: the extractive summary of every
corpus transcript, in both templates, at several lengths, judged against its own prompt and
transcript. It quotes requests and commands verbatim and says "None" where the history
shows nothing, so it is a hard case for the copy, filler and section rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.dialects import parse_messages
from app.core.extractive import extract_archived, extract_summary
from app.core.ports import SummaryRequest
from app.core.prompt import SUMMARY_SYSTEM
from app.core.summary_check import accept_summary, source_of
from tests.corpus import FILES, load


@pytest.mark.parametrize("template", ["sections", "archived"])
@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_extractive_summaries_of_the_corpus_are_summaries(path: Path, template: str) -> None:
    fmt = "openai" if path.name.endswith(".openai.json") else "anthropic"
    messages = parse_messages([m for m in load(path) if m.get("role") != "system"], fmt)
    render = extract_archived if template == "archived" else extract_summary
    rejected = []
    for cut in sorted({1, 3, len(messages) // 2, len(messages)}):
        part = messages[: max(cut, 1)]
        text = render(part, 1200)
        request = SummaryRequest(
            messages=tuple(part),
            system=SUMMARY_SYSTEM,
            prompt="",
            max_words=1200,
            template=template,  # type: ignore[arg-type]
        )
        verdict = accept_summary(
            text,
            template=template,  # type: ignore[arg-type]
            cap_tokens=100_000,
            count=lambda t: len(t.split()),
            source=source_of(request),
        )
        if verdict != text.strip():
            rejected.append((cut, str(verdict)))
    assert rejected == []
