"""The digest path through the real service: short calls over notes, never the transcript."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.errors import SummarizerError
from app.core.messages import dump_messages
from app.core.options.compact import CompactOptions
from app.core.ports import SummaryRequest
from app.core.summary.digest import DIGEST_SHARE, DIGEST_SYSTEM
from app.core.summary.extractive import ExtractiveSummarizer
from app.core.summary.prompt import SUMMARY_SYSTEM
from app.service.compaction import CompactionService, CompactRequest
from tests.builders import (
    FakeSummarizer,
    assistant,
    build_service,
    parse,
    system,
    tool_result,
    tool_use,
    user,
)
from tests.fakes.tokenizer import WordTokenizer

pytestmark = pytest.mark.anyio

WORDS = WordTokenizer()
ANSWERS = {"Goals & Decisions": "Fix the parser.", "Task Status": "- Tests next."}


def answer(request: SummaryRequest) -> str:
    return ANSWERS[request.section or ""]


def history(rounds: int) -> list[dict[str, Any]]:
    raw: list[dict[str, Any]] = [system("s")]
    for k in range(rounds):
        raw += [
            user(f"Request {k}: make the parser accept input {k}."),
            assistant(f"Step {k}.", tool_use("bash", f"c{k}", command=f"pytest -k case{k}")),
            tool_result(f"c{k}", f"output {k} " * 300),
            assistant(f"Done {k}."),
        ]
    return raw


def service(summarizer: Any, mode: str = "digest", **more: Any) -> CompactionService:
    return build_service(WORDS, summarizer, read_tools=(), summary_mode=mode, **more)


async def compact(
    svc: CompactionService, raw: list[dict[str, Any]], strategy: str = "full", **more: Any
) -> Any:
    options = CompactOptions(strategy=strategy, **more)  # type: ignore[arg-type]
    return await svc.compact(CompactRequest(messages=parse(raw), force=True, options=options))


async def test_the_digest_path_asks_one_question_per_section_over_the_same_notes() -> None:
    summarizer = FakeSummarizer(answer)
    raw = history(30)
    result = await compact(service(summarizer, summary_input_budget=5000), raw)
    goals, status = summarizer.requests
    assert (goals.section, status.section) == ("Goals & Decisions", "Task Status")
    notes = goals.prompt.split("</notes>")[0]
    assert status.prompt.split("</notes>")[0] == notes
    for request in (goals, status):
        assert request.system == DIGEST_SYSTEM
        assert request.prompt.startswith("<notes>\nUser requests, in order")
        assert "[tool result id=" not in request.prompt  # no transcript
        assert "pytest -k case29" in request.prompt
        history_tokens = sum(WORDS.count(str(m["content"])) for m in raw[1:])
        assert WORDS.count(request.prompt) <= DIGEST_SHARE * history_tokens
        # the fallback, and the ledger, still read the whole rest
        assert dump_messages(request.messages) == raw[1:]
    assert (result.compacted, result.summarizer, result.summary_chunks) == (True, "fake", 2)
    # the model's sections in the template's order, with the service's lines from the facts
    assert result.summary.startswith(
        "## Goals & Decisions\n"
        '- First request: "Request 0: make the parser accept input 0."\n'
        '- Latest request: "Request 29: make the parser accept input 29."\n'
        "- Fix the parser.\n\n"
        "## File Operations\n- None.\n\n"
        "## Tool Calls\n- Calls: bash 30.\n"
    )
    assert "- `pytest -k case29`\n\n## Task Status\n- Tests next.\n\n" in result.summary
    assert "## Errors & Resolutions\n- None observed." in result.summary


async def test_the_transcript_path_is_unchanged() -> None:
    summarizer = FakeSummarizer(lambda r: "## Goals & Decisions\n- Fix the parser.")
    await compact(service(summarizer, mode="transcript"), history(3))
    (request,) = summarizer.requests
    assert request.system == SUMMARY_SYSTEM
    assert "<conversation>" in request.prompt


async def test_the_archive_template_of_the_tail_strategy_keeps_the_transcript() -> None:
    summarizer = FakeSummarizer(lambda r: "### 🎯 Objectives & Status\n- x")
    result = await compact(
        service(summarizer), history(6), strategy="tail", tail_keep_recent_rounds=2
    )
    assert result.compacted is True
    assert summarizer.requests
    assert [(r.system, r.template) for r in summarizer.requests] == [(SUMMARY_SYSTEM, "archived")]


async def test_a_failed_digest_call_falls_back_to_the_extractive_summary_of_the_rest() -> None:
    def fail(request: SummaryRequest) -> str:
        raise SummarizerError("copy of the notes", retryable=False)

    raw = history(4)
    result = await compact(service(FakeSummarizer(fail), fallback=ExtractiveSummarizer()), raw)
    assert result.summarizer == "extractive"
    assert "Request 0: make the parser accept input 0." in result.summary
    assert "Request 3: make the parser accept input 3." in result.summary


async def test_a_failed_second_question_falls_back_whole_and_asks_nothing_more() -> None:
    def second_fails(request: SummaryRequest) -> str:
        if request.section == "Task Status":
            raise SummarizerError("copy of the notes", retryable=False, reason="copy")
        return "Fix the parser."

    summarizer = FakeSummarizer(second_fails)
    raw = history(4)
    result = await compact(service(summarizer, fallback=ExtractiveSummarizer()), raw)
    assert [r.section for r in summarizer.requests] == ["Goals & Decisions", "Task Status"]
    assert (result.summarizer, result.summary_chunks) == ("extractive", 2)  # calls made
    assert "Fix the parser." not in result.summary  # no half of the model's summary
    assert "Request 0: make the parser accept input 0." in result.summary
    assert any("copy of the notes" in w for w in result.warnings)
