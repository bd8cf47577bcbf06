from __future__ import annotations

import pytest

from app.core.ledger.budget import LedgerBudget, summary_words_for


def test_the_summary_word_limit_follows_small_windows_only() -> None:
    assert summary_words_for(200_000, 0.05, 1200) == 1200
    assert summary_words_for(32_000, 0.05, 1200) == 1200
    assert summary_words_for(16_000, 0.05, 1200) == 600
    assert summary_words_for(2_000, 0.05, 1200) == 200


@pytest.mark.parametrize(
    ("window", "tokens"),
    [
        (2_000, 1000),
        (16_000, 4000),
        (32_000, 8000),
        (48_000, 12_000),
        (64_000, 12_000),
        (128_000, 12_000),
        (200_000, 12_000),
        (1_000_000, 20_000),
    ],
)
def test_a_small_window_gives_the_ledger_up_to_a_quarter_of_itself(
    window: int, tokens: int
) -> None:
    assert LedgerBudget().tokens(window) == tokens


def test_a_fixed_budget_is_kept_whatever_the_window() -> None:
    assert LedgerBudget(fixed=0).tokens(32_000) == 0
