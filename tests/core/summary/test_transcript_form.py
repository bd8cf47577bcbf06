"""An answer with a line in the transcript's own form
(`app.core.summary.prompt.serialize_for_summary`: `[user]`, `[tool call …`) is a copy, however
it is decorated; a summary that only names such a marker inside a sentence, or writes other
bracketed lines, is not."""

from __future__ import annotations

import pytest

from tests.core.summary.test_check import judged
from tests.summary_answers import SUMMARY

RETYPED = [
    "[assistant]",
    "[Assistant]",
    "  [USER]  ",
    "**[user]**",
    "__[assistant]__",
    "> [user]",
    "- [system]",
    "[tool]:",
    "[tool result id=toolu_01HX error]",
    '[Tool Call read_file id=c9] {"path": "src/parser.py"}',
    '> [tool call bash id=call_7] {"command": "pytest -q"}',
]
NAMED = [
    "- The [user] asked to keep the old token name.",
    "- The serializer's `[tool call …]` lines were left as they were.",
    "[x] parser tests pass",
    "[TODO] document the new flag",
    "- [tool] registry: bash was added to it.",
    "- Markers like [tool result id=…] were stripped from the log.",
]


@pytest.mark.parametrize("line", RETYPED)
def test_a_line_in_the_transcripts_form_is_a_copy(line: str) -> None:
    answer = SUMMARY.replace("## Task Status\n", f"## Task Status\n{line}\n")
    assert judged(answer) == "copy"


@pytest.mark.parametrize("line", NAMED)
def test_a_summary_naming_a_marker_or_with_other_brackets_passes(line: str) -> None:
    answer = SUMMARY.replace("## Task Status\n", f"## Task Status\n{line}\n")
    assert judged(answer) is None
