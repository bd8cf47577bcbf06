"""Real summaries of real sessions pass the summary check: the extractive summary of every
corpus transcript, in both templates, at several lengths, judged against its own prompt and
transcript. It quotes requests and commands verbatim and says "None" where the history
shows nothing, so it is a hard case for the copy, filler and section rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.gate.check import accept_summary, source_of
from app.core.ports import SummaryRequest
from app.core.provider.formats import parse_messages
from app.core.summary.extractive import extract_archived, extract_summary
from app.core.summary.prompt import SUMMARY_SYSTEM
from tests.corpus import FILES, load


@pytest.mark.slow
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


# A summary as an LLM writes one (paraphrase, its own verbs, quotes where the prompt asks)
# of the pydicom session: two thirds of its words are the session's, against 20% needed.
PYDICOM_SUMMARY = """## Goals & Decisions
- Resolve a pydicom bug: accessing `pixel_array` fails for Float Pixel Data / Double Float Pixel
  Data datasets lacking the Pixel Representation element.
- Decision: only require PixelRepresentation when PixelData is present, rather than always.

## File Operations
- Created `reproduce_bug.py` to reproduce the failure, later deleted it.
- Modified `pydicom/pixel_data_handlers/numpy_handler.py` (`get_pixeldata`): removed
  'PixelRepresentation' from the unconditional `required_elements` list and appended it only if
  'PixelData' is in the dataset.

## Tool Calls
- Ran `python reproduce_bug.py` before and after the edit; afterwards it printed "Script
  completed successfully, no errors. Result: True".
- `rm reproduce_bug.py`, then `submit`.

## Task Status
- Completed: the fix was verified and submitted. No further steps remain.

## Errors & Resolutions
- Initially an AttributeError was raised for missing required elements; resolved by the
  conditional requirement.
"""


def test_an_llm_style_summary_of_a_corpus_session_passes() -> None:
    [path] = [f for f in FILES if f.name == "swe-pydicom-pydicom-1458.anthropic.json"]
    messages = parse_messages([m for m in load(path) if m.get("role") != "system"], "anthropic")
    request = SummaryRequest(
        messages=tuple(messages), system=SUMMARY_SYSTEM, prompt="", max_words=1200
    )
    verdict = accept_summary(
        PYDICOM_SUMMARY,
        template="sections",
        cap_tokens=100_000,
        count=lambda t: len(t.split()),
        source=source_of(request),
    )
    assert verdict == PYDICOM_SUMMARY.strip()
