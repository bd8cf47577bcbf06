"""The summary check: real answers of several model families that are not summaries, each
with its reason, and real summaries (quoting errors and apologies they saw) that pass."""

from __future__ import annotations

import pytest

from app.core.summary_check import (
    SUMMARY_FAILURES,
    check_summary,
    has_heading,
    known_reason,
    label_non_summary,
    stop_failure,
)


def words(text: str) -> int:
    return len(text.split())


def check(text: str, template: str = "sections", cap: int = 1000) -> str | None:
    failure = check_summary(text, template=template, cap_tokens=cap, count=words)  # type: ignore[arg-type]
    return None if failure is None else failure.reason


# Answers seen from real models (and their servers) instead of a summary.
REFUSALS = {
    "openai": "I'm sorry, but I can't help with that.",
    "openai-curly": "I’m sorry, but I can’t assist with that request.",
    "openai-short": "I can't help with that.",
    "anthropic": "I apologize, but I cannot assist with summarizing this conversation.",
    "anthropic-decline": "I must respectfully decline to produce this summary.",
    "llama": "I cannot provide a summary of this conversation as it contains sensitive data.",
    "llama-fulfill": "I can't fulfill that request.",
    "qwen": "Sorry, but I can't assist with that.",
    "mistral": "I'm unable to assist with that request.",
    "gemini": "I'm just a language model, so I can't help you with that.",
    "gemini-able": "I'm not able to help with that, as I'm only a language model.",
    "legacy": "As an AI language model, I cannot summarize private conversations.",
    "afraid": "I'm afraid I can't do that.",
    "comfortable": "I don't feel comfortable summarizing this content.",
}
APOLOGIES = {
    "openai": "I apologize for the confusion. Could you please provide the conversation?",
    "llama": "I'm sorry for any misunderstanding. Let me know what you need.",
    "gemini": "Sorry, something about this request is unclear to me.",
    "unfortunately": "Unfortunately, the conversation you provided appears to be empty.",
}
ERRORS = {
    "vllm-text": "Error: The model `qwen2.5-coder:32b` does not exist.",
    "vllm-json": '{"object":"error","message":"The model `x` does not exist.","code":404}',
    "ollama-json": '{"error":"model \\"llama3\\" not found, try pulling it first"}',
    "model": "The model `gpt-5-mini` does not exist or you do not have access to it.",
    "gateway-html": "<html><body><h1>502 Bad Gateway</h1></body></html>",
    "gateway-text": "Internal Server Error",
    "traceback": 'Traceback (most recent call last):\n  File "server.py", line 1',
    "rate": "Rate limit exceeded. Please try again later.",
    "occurred": "An error occurred while processing your request.",
    "upper": "ERROR 404: model not found",
}


@pytest.mark.parametrize("text", REFUSALS.values(), ids=REFUSALS.keys())
def test_refusals_of_every_model_family_are_refusals(text: str) -> None:
    assert check(text) == "refusal"
    assert check(text, "archived") == "refusal"


@pytest.mark.parametrize("text", APOLOGIES.values(), ids=APOLOGIES.keys())
def test_apologies_without_a_summary_are_apologies(text: str) -> None:
    assert check(text) == "apology"


@pytest.mark.parametrize("text", ERRORS.values(), ids=ERRORS.keys())
def test_error_messages_as_text_are_error_messages(text: str) -> None:
    assert check(text) == "error_message"


SUMMARY = """## Goals & Decisions
- Fix the failing import in `app/main.py`.
## File Operations
- Edited `app/main.py`.
## Tool Calls
- `pytest -q`: 3 failed, then all passed.
## Task Status
- Done; next: run the linters.
## Errors & Resolutions
- The agent hit `Error: file not found` and fixed the path.
"""


@pytest.mark.parametrize(
    "text",
    [
        SUMMARY,
        # quoting a refusal, an apology and an error the agent saw, even on the first line
        "## Goals & Decisions\nI'm sorry, I can't help with that. (the user asked to stop)",
        "Error: The model does not exist was seen.\n## Errors & Resolutions\n- fixed the name",
        "**Goals & Decisions**: fix the bug\n**Task Status**: done",
        "1. Goals & Decisions\n- fix it",
        "Goals & Decisions:\n- fix it",
        "### goals\n- lower case works",
    ],
)
def test_summaries_with_a_heading_pass_whatever_they_quote(text: str) -> None:
    assert check(text) is None


def test_a_sentence_that_quotes_an_error_is_not_a_refusal_or_an_error() -> None:
    text = "The agent hit `Error: file not found` and fixed the path."
    assert label_non_summary(text) == "no_sections"
    assert label_non_summary("I'm sorry, I can't help with that.") == "refusal"


def test_prose_without_any_heading_is_no_sections() -> None:
    assert check("The user wanted to fix a bug; the agent edited main.py.") == "no_sections"
    # a heading of the other template does not count
    assert check("### 🎯 Objectives & Status\n* done") == "no_sections"


def test_the_archived_template_has_its_own_headings() -> None:
    text = "## 📌 Archived Session Summary\n### 🎯 Objectives & Status\n* **Original Goal**: x"
    assert check(text, "archived") is None
    assert has_heading("### 📂 File System State (Snapshot)", "archived")
    assert not has_heading(text, "sections")


def test_a_heading_word_in_prose_is_not_a_heading() -> None:
    assert not has_heading("Goals were set by the user and met.", "sections")


@pytest.mark.parametrize("text", ["", "   \n\t", "\n\n"])
def test_empty_text_is_empty(text: str) -> None:
    assert check(text) == "empty"


def test_a_summary_over_the_cap_is_oversized() -> None:
    assert check(SUMMARY, cap=words(SUMMARY)) is None
    assert check(SUMMARY, cap=words(SUMMARY) - 1) == "oversized"


def test_megabytes_are_oversized_without_being_counted() -> None:
    counted: list[int] = []

    def count(text: str) -> int:
        counted.append(len(text))
        return 1

    huge = "## Goals & Decisions\n" + "x" * 10_000_000
    failure = check_summary(huge, template="sections", cap_tokens=8192, count=count)
    assert failure is not None
    assert (failure.reason, failure.retryable, counted) == ("oversized", False, [])
    assert str(failure) == "[oversized] summary over 8192 tokens"


@pytest.mark.parametrize(
    ("stop", "reason", "message"),
    [
        ("length", "truncated", "summary cut off at max_tokens"),
        ("max_tokens", "truncated", "summary cut off at max_tokens"),
        ("refusal", "refusal", "the model refused to summarize"),
        ("content_filter", "filtered", "the summary was filtered by the server"),
    ],
)
def test_stop_reasons_that_mean_failure(stop: str, reason: str, message: str) -> None:
    failure = stop_failure(stop)
    assert failure is not None
    assert (failure.reason, failure.retryable, str(failure)) == (
        reason,
        False,
        f"[{reason}] {message}",
    )


@pytest.mark.parametrize("stop", ["stop", "end_turn", "stop_sequence", None, 3, "tool_use"])
def test_normal_stop_reasons_are_not_failures(stop: object) -> None:
    assert stop_failure(stop) is None


def test_every_reason_is_a_label_and_anything_else_is_other() -> None:
    assert all(known_reason(r) == r for r in SUMMARY_FAILURES)
    assert known_reason("boom") == "other"
    assert known_reason(None) == "other"
