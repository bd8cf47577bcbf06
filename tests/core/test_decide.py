import pytest

from app.core.decide import (
    DecisionReason,
    Thresholds,
    decide,
    estimate_pending_input,
    usage_tokens,
)

DEFAULT = Thresholds(context_window=200_000, threshold=0.8, overflow_threshold=0.9, min_messages=3)


@pytest.mark.parametrize(
    ("tokens", "should", "overflow", "reason"),
    [
        (159_999, False, False, DecisionReason.BELOW_THRESHOLD),
        (160_000, True, False, DecisionReason.ABOVE_THRESHOLD),
        (179_999, True, False, DecisionReason.ABOVE_THRESHOLD),
        (180_000, True, True, DecisionReason.OVERFLOW),
        (250_000, True, True, DecisionReason.OVERFLOW),
    ],
)
def test_threshold_and_overflow_boundaries(
    tokens: int, should: bool, overflow: bool, reason: DecisionReason
) -> None:
    decision = decide(tokens, 10, DEFAULT)
    assert (decision.should_compact, decision.overflow, decision.reason) == (
        should,
        overflow,
        reason,
    )


def test_too_few_messages_never_compact_but_still_report_overflow() -> None:
    decision = decide(190_000, 2, DEFAULT)
    assert decision.should_compact is False
    assert decision.overflow is True
    assert decision.reason is DecisionReason.BELOW_MIN_MESSAGES


def test_threshold_tokens_round_up() -> None:
    t = Thresholds(context_window=1001, threshold=0.5, overflow_threshold=0.9, min_messages=0)
    assert t.threshold_tokens == 501
    assert decide(500, 5, t).should_compact is False
    assert decide(501, 5, t).should_compact is True


def test_anthropic_usage_counts_every_prompt_part_and_the_answer() -> None:
    usage = {
        "input_tokens": 1000,
        "cache_creation_input_tokens": 200,
        "cache_read_input_tokens": 150_000,
        "output_tokens": 800,
    }
    assert usage_tokens(usage) == 152_000


def test_openai_usage_counts_prompt_and_completion() -> None:
    assert usage_tokens({"prompt_tokens": 9000, "completion_tokens": 1000, "total_tokens": 1}) == (
        10_000
    )


def test_pending_input_is_estimated_at_three_characters_a_token() -> None:
    assert estimate_pending_input("x" * 3001) == 1000
    assert estimate_pending_input("") == 0
