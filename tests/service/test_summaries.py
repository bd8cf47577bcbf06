"""A summary step answers with its summary and the warnings met on the way.

No step appends to a list its caller passed: `Summaries.summarize` returns a
`SummaryOutcome`, and no function in `app/` takes a `warnings` list to fill.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.errors import SummarizerError
from app.core.options.params import SummaryParams
from app.core.ports import SummaryRequest
from app.service.chunked import ChunkedSummary, SummaryOutcome
from app.service.defaults import Defaults
from app.service.summaries import Summaries
from tests.builders import FakeSummarizer, parse, user

pytestmark = pytest.mark.anyio

APP = Path(__file__).resolve().parents[2] / "app"
PARAMS = SummaryParams(max_summary_words=300, summary_input_budget=100_000, ledger_budget=0)
REST = parse([user("Fix the bug in a.py.")])


def failing(request: SummaryRequest) -> str:
    raise SummarizerError("HTTP 500", retryable=True)


def summaries(
    tokenizer: TiktokenTokenizer, main: FakeSummarizer, *fallback: FakeSummarizer
) -> Summaries:
    return Summaries(main, fallback[0] if fallback else None, tokenizer, Defaults())


async def test_a_summary_comes_back_with_who_wrote_it_and_no_warning(
    tokenizer: TiktokenTokenizer,
) -> None:
    got = await summaries(tokenizer, FakeSummarizer()).summarize(REST, PARAMS, None)
    assert got == SummaryOutcome(ChunkedSummary("SUMMARY", "fake", 1), (), calls=1)


async def test_a_fallbacks_summary_comes_back_with_both_warnings(
    tokenizer: TiktokenTokenizer,
) -> None:
    main = FakeSummarizer(failing, name="llm")
    got = await summaries(tokenizer, main, FakeSummarizer(name="extractive")).summarize(
        REST, PARAMS, None
    )
    assert got == SummaryOutcome(
        ChunkedSummary("SUMMARY", "extractive", 1),
        (
            "summarizer llm failed: HTTP 500",
            "summary written by the fallback summarizer extractive",
        ),
        calls=1,  # the failed call; the fallback's is not counted
    )


async def test_a_failed_summary_is_none_with_every_failure_named(
    tokenizer: TiktokenTokenizer,
) -> None:
    both = summaries(
        tokenizer, FakeSummarizer(failing, name="llm"), FakeSummarizer(failing, name="backup")
    )
    got = await both.summarize(REST, PARAMS, None)
    assert got == SummaryOutcome(
        None,
        ("summarizer llm failed: HTTP 500", "fallback summarizer backup failed: HTTP 500"),
        calls=1,
    )


def test_no_function_takes_a_warnings_list_to_fill() -> None:
    found = []
    for module in sorted(APP.rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                found += [
                    f"{module.relative_to(APP)}:{node.name}"
                    for arg in args
                    if arg.arg == "warnings"
                    and arg.annotation is not None
                    and "list" in ast.unparse(arg.annotation)
                ]
    assert found == []


async def test_the_log_says_why_each_summarizer_failed(
    tokenizer: TiktokenTokenizer, caplog: pytest.LogCaptureFixture
) -> None:
    def timed_out(request: SummaryRequest) -> str:
        raise SummarizerError(
            "summary attempt took longer than 3s (COMPACT_SUMMARY_TIMEOUT) after 3 attempts",
            retryable=True,
            reason="timeout",
        )

    def refused(request: SummaryRequest) -> str:
        raise SummarizerError("no messages", retryable=False)

    main, fallback = FakeSummarizer(timed_out, name="openai"), FakeSummarizer(refused, name="x")
    with caplog.at_level("WARNING", logger="context_compact.compaction"):
        await summaries(tokenizer, main, fallback).summarize(REST, PARAMS, None)
    said = [(r.getMessage(), r.reason, r.error) for r in caplog.records]  # type: ignore[attr-defined]
    assert said == [
        (
            "summarizer openai failed: [timeout] summary attempt took longer than 3s "
            "(COMPACT_SUMMARY_TIMEOUT) after 3 attempts",
            "timeout",
            "summary attempt took longer than 3s (COMPACT_SUMMARY_TIMEOUT) after 3 attempts",
        ),
        ("fallback summarizer x failed: no messages", None, "no messages"),
    ]


async def test_the_prompt_an_llm_reads_has_long_tool_results_clipped_and_the_rest_whole(
    tokenizer: TiktokenTokenizer,
) -> None:
    from app.core.summary.prompt import clipped
    from tests.builders import assistant, tool_result, tool_use

    listing = "\n".join(f"line {i} of the file" for i in range(200))
    rest = parse(
        [
            user("Read a.py and run the tests."),
            assistant(tool_use("Read", "t1", path="a.py")),
            tool_result("t1", listing),
            assistant(tool_use("Bash", "t2", command="pytest")),
            tool_result("t2", "1 failed: test_a"),
        ]
    )
    main = FakeSummarizer()
    await summaries(tokenizer, main).summarize(rest, PARAMS, None)
    (prompt,) = [r.prompt for r in main.requests]
    assert f"[tool result id=t1]\n{clipped(listing)}\n" in prompt
    assert listing not in prompt
    assert "[tool result id=t2]\n1 failed: test_a\n" in prompt
    assert "Read a.py and run the tests." in prompt
