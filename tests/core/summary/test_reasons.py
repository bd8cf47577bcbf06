"""The vocabulary of summary failures and its metrics labels."""

from __future__ import annotations

from app.core.summary.reasons import SUMMARY_FAILURES, known_reason


def test_every_reason_is_a_label_and_anything_else_is_other() -> None:
    assert all(known_reason(r) == r for r in SUMMARY_FAILURES)
    assert len(set(SUMMARY_FAILURES)) == len(SUMMARY_FAILURES)
    assert known_reason("boom") == "other"
    assert known_reason(None) == "other"
