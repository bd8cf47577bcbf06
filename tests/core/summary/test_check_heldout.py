"""The summary check against answers its other tests do not spell (a reviewer's held-out
set): refusals, apologies and provider errors in other words and ten languages, wherever
they stand; and real summaries, of short and long corpus sessions, that still pass."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.ports import SummaryRequest
from app.core.provider.dialects import parse_messages
from app.core.summary.check import SummarySource, accept_summary, check_summary, source_of
from app.core.summary.prompt import SUMMARY_SYSTEM
from tests.builders import parse
from tests.corpus import FILES, load
from tests.summary_answers import ARCHIVED, SUMMARY, request
from tests.summary_heldout import (
    CHINESE_CONVERSATION,
    CHINESE_SUMMARY,
    COLON_FIRST_MESSAGE,
    COLON_PARAPHRASE,
    COLON_SUMMARY,
    ECHOES,
    ERRORS,
    FILLERS,
    GUARD_CONVERSATION,
    GUARD_SUMMARIES,
    ONE_TOOL_CONVERSATION,
    ONE_TOOL_SUMMARY,
    PLACES,
    RATE_LIMITED_CONVERSATION,
    RATE_LIMITED_SUMMARY,
    REASONING_ONLY,
    REFUSALS,
    REPORT_LINES,
    TRANSLATED_SUMMARIES,
    WRAPPED,
)

SOURCE = source_of(request())


def judged(text: str, source: SummarySource = SOURCE) -> str | None:
    failure = check_summary(
        text,
        template="sections",
        cap_tokens=10_000,
        count=lambda t: len(t.split()),
        source=source,
    )
    return None if failure is None else failure.reason


def accepted(text: str, source: SummarySource = SOURCE) -> str:
    verdict = accept_summary(
        text,
        template="sections",
        cap_tokens=10_000,
        count=lambda t: len(t.split()),
        source=source,
    )
    assert isinstance(verdict, str), verdict
    return verdict


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("name", REFUSALS)
def test_a_refusal_in_other_words_fails_wherever_it_stands(name: str, place: str) -> None:
    assert judged(PLACES[place](REFUSALS[name])) in {"refusal", "apology"}


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("name", ERRORS)
def test_a_provider_error_in_other_words_fails_wherever_it_stands(name: str, place: str) -> None:
    assert judged(PLACES[place](ERRORS[name])) == "error_message"


def source_of_conversation(conversation: list[dict[str, Any]]) -> SummarySource:
    messages = parse(conversation)
    return source_of(
        SummaryRequest(messages=tuple(messages), system=SUMMARY_SYSTEM, prompt="", max_words=1200)
    )


def source_of_corpus(name: str, cut: int | None = None) -> SummarySource:
    [path] = [f for f in FILES if f.name == name]
    messages = parse_messages([m for m in load(path) if m.get("role") != "system"], "anthropic")
    part = tuple(messages[:cut] if cut else messages)
    return source_of(
        SummaryRequest(messages=part, system=SUMMARY_SYSTEM, prompt="", max_words=1200)
    )


COLON = "swe-swe-agent-test-repo-i1.anthropic.json"
REAL = {
    "refusal-task-reported": (GUARD_CONVERSATION, GUARD_SUMMARIES["reports-the-refusal-task"]),
    "refusal-task-quoted": (GUARD_CONVERSATION, GUARD_SUMMARIES["quotes-the-refusal-unmarked"]),
    "chinese-under-english-headings": (CHINESE_CONVERSATION, CHINESE_SUMMARY),
    "one-request-one-tool-call": (ONE_TOOL_CONVERSATION, ONE_TOOL_SUMMARY),
    "quotes-a-rate-limit-error": (RATE_LIMITED_CONVERSATION, RATE_LIMITED_SUMMARY),
}


@pytest.mark.parametrize("name", REAL)
def test_real_summaries_of_small_conversations_pass_unchanged(name: str) -> None:
    conversation, summary = REAL[name]
    assert accepted(summary, source_of_conversation(conversation)) == summary.strip()


@pytest.mark.parametrize(
    ("summary", "cut"),
    [(COLON_SUMMARY, None), (COLON_PARAPHRASE, None), (COLON_FIRST_MESSAGE, 1)],
    ids=["paraphrase", "strong-paraphrase", "first-message-says-none"],
)
def test_real_summaries_of_a_corpus_session_pass_unchanged(summary: str, cut: int | None) -> None:
    assert accepted(summary, source_of_corpus(COLON, cut)) == summary.strip()


@pytest.mark.parametrize(
    "chatter",
    [
        "Sure! Here is the summary you asked for:\n\n{}",
        "Certainly. Below is a concise summary of the session.\n\n{}\nLet me know if you need "
        "anything else!",
        "Happy to help!\n{}\nI hope this helps.",
        "好的，以下是对话摘要：\n{}",
        "¡Claro! Aquí tienes el resumen:\n{}",
    ],
)
def test_polite_chatter_around_a_real_summary_is_no_refusal(chatter: str) -> None:
    text = chatter.format(COLON_SUMMARY)
    assert accepted(text, source_of_corpus(COLON)) == text.strip()


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("name", WRAPPED)
def test_reasoning_and_template_tokens_of_any_spelling_are_removed(name: str) -> None:
    assert lines(accepted(WRAPPED[name])) == lines(SUMMARY)


@pytest.mark.parametrize("name", REASONING_ONLY)
def test_reasoning_that_never_reached_an_answer_fails(name: str) -> None:
    assert judged(REASONING_ONLY[name]) == "reasoning_only"


def test_reasoning_tokens_quoted_in_a_summary_are_text() -> None:
    text = SUMMARY.replace(
        "- ModuleNotFoundError for yaml: resolved by installing pyyaml.",
        "- ModuleNotFoundError for yaml: resolved by installing pyyaml (the `[THINK]`\n"
        "  and `[/THINK]` tokens of the model were noted).",
    )
    assert accepted(text) == text.strip()


@pytest.mark.parametrize("name", ECHOES)
def test_echoes_of_the_prompt_template_or_transcript_fail(name: str) -> None:
    text, reason = ECHOES[name]
    assert judged(text) == reason


@pytest.mark.parametrize("name", FILLERS)
def test_filler_under_the_headings_fails(name: str) -> None:
    text, reason = FILLERS[name]
    assert judged(text) == reason


@pytest.mark.parametrize("name", TRANSLATED_SUMMARIES)
def test_a_summary_in_other_words_reporting_the_errors_met_passes(name: str) -> None:
    text = TRANSLATED_SUMMARIES[name]
    assert accepted(text) == text.strip()


ARCHIVED_SOURCE = source_of(request("archived"))
GOAL = "* **Original Goal**: fix the failing parser tests in `src/parser.py`."


@pytest.mark.parametrize("name", [*REFUSALS, *ERRORS])
def test_the_archived_template_fails_a_held_out_answer_in_its_first_item(name: str) -> None:
    sentence = REFUSALS.get(name) or ERRORS[name]
    failure = check_summary(
        ARCHIVED.replace(GOAL, sentence),
        template="archived",
        cap_tokens=10_000,
        count=lambda t: len(t.split()),
        source=ARCHIVED_SOURCE,
    )
    assert (failure and failure.reason) in {"refusal", "apology", "error_message"}


@pytest.mark.parametrize("line", REPORT_LINES)
def test_a_report_that_reads_close_to_a_refusal_or_error_passes(line: str) -> None:
    last = "- ModuleNotFoundError for yaml: resolved by installing pyyaml."
    text = SUMMARY.replace(last, f"{last}\n{line}")
    assert accepted(text) == text.strip()
