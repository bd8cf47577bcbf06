"""Whether the settings give a local CPU server's largest call the time it needs."""

from __future__ import annotations

from app.core.summary.local_speed import (
    ANSWER_TOKENS_PER_SECOND,
    PROMPT_TOKENS_PER_SECOND,
    CallBound,
    call_seconds,
    deadline_warning,
)


def bound(input_tokens: int, output_tokens: int, timeout: float, deadline: float) -> CallBound:
    return CallBound(input_tokens, output_tokens, timeout, attempts=1, deadline=deadline)


def test_a_call_takes_its_prompt_and_its_answer_at_the_slow_speeds() -> None:
    assert call_seconds(7000, 70) == 7000 / PROMPT_TOKENS_PER_SECOND + 70 / ANSWER_TOKENS_PER_SECOND


def test_a_call_that_fits_both_the_timeout_and_the_deadline_gives_no_warning() -> None:
    needed = call_seconds(3000, 500)
    assert deadline_warning(bound(3000, 500, needed, needed)) is None


def test_the_shorter_of_timeout_and_deadline_decides_and_the_warning_names_the_settings() -> None:
    needed = call_seconds(3000, 500)
    assert deadline_warning(bound(3000, 500, needed + 100, needed - 1)) is not None
    warning = deadline_warning(bound(3000, 500, needed - 1, needed + 100))
    assert warning is not None
    assert warning.startswith(
        f"a summary call of up to 3000 input and 500 output tokens takes about {needed:.0f} s"
    )
    for name in ("COMPACT_SUMMARY_TIMEOUT", "COMPACT_SUMMARY_INPUT_BUDGET", "MAX_TOKENS"):
        assert name in warning
