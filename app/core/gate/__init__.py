"""The gate every LLM answer passes before it is used as a summary: `check` runs the
rules (the answer cleaned of reasoning and template tokens, `answer_clean`; refusals and
errors, `refusals`; its sections, `sections`; copies and echoes, `overlap` and
`alignment`; its shape, `shape`), then `truth` holds it to this conversation (what it
names found in the history, `entities` and `grounding`; the salient facts covered,
`coverage`). The sentences it drops travel as warnings (`app.core.summary.trimmed`)."""

from app.core.gate.check import judge_summary, opening, signal_failure, source_of, stop_failure

__all__ = [
    "judge_summary",
    "opening",
    "signal_failure",
    "source_of",
    "stop_failure",
]
