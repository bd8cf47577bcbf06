"""A summary's input budget fitted to the server's window (`app.core.summary.window_fit`)."""

from __future__ import annotations

from app.core.summary.window_fit import SERVER_TOKEN_RATIO, fit_warning, fitted_budget


def test_an_unknown_window_keeps_the_budget() -> None:
    assert fitted_budget(100_000, None, 4096) == 100_000


def test_a_smaller_window_lowers_the_budget_to_its_room_beside_the_answer() -> None:
    assert fitted_budget(100_000, 8192, 700) == int((8192 - 700) / SERVER_TOKEN_RATIO)
    assert fitted_budget(4000, 8192, 700) == 4000
    assert fitted_budget(4000, 512, 700) == 0


def test_the_warning_names_the_setting_and_the_window() -> None:
    assert fit_warning(100_000, 5993, 8192) == (
        "summary_input_budget 100000 lowered to 5993: the summarizer's server has a context "
        "window of 8192 tokens (set COMPACT_SUMMARY_INPUT_BUDGET to match it)"
    )
