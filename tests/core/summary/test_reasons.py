"""The vocabulary of summary failures and its metrics labels."""

from __future__ import annotations

import re
from pathlib import Path

from app.core.summary.reasons import SUMMARY_FAILURES, known_reason


def test_every_reason_is_a_label_and_anything_else_is_other() -> None:
    assert all(known_reason(r) == r for r in SUMMARY_FAILURES)
    assert len(set(SUMMARY_FAILURES)) == len(SUMMARY_FAILURES)
    assert known_reason("boom") == "other"
    assert known_reason(None) == "other"


def test_every_reason_the_gate_fails_with_is_in_the_vocabulary() -> None:
    """A reason the gate gives but the vocabulary lacks is counted as `other` by the
    metrics: each `_failure("reason", ...)` of the gate's modules is one of them."""
    gate = Path(__file__).resolve().parents[3] / "app" / "core" / "gate"
    given = {
        reason
        for module in gate.glob("*.py")
        for reason in re.findall(r'_failure\(\s*"([a-z_]+)"', module.read_text(encoding="utf-8"))
    }
    assert len(given) > 10
    assert sorted(given - set(SUMMARY_FAILURES)) == []
