"""Sentences naming what the history does not hold are dropped, with a warning; an answer
made mostly of them is rejected."""

from __future__ import annotations

from app.core.gate.entities import HistoryText
from app.core.gate.grounding import ground
from tests.builders import assistant, parse, tool_result, tool_use, user

HISTORY = HistoryText.of(
    parse(
        [
            user("Fix the off-by-one in app/pager.py."),
            assistant("Reading.", tool_use("read_file", "t1", path="app/pager.py")),
            tool_result("t1", "def page(n): return items[n:n+10]"),
        ]
    )
)


def test_a_foreign_sentence_is_dropped_and_named_in_a_warning() -> None:
    text = (
        "## Goals & Decisions\n- Fix the off-by-one in `app/pager.py`. Then deploy with "
        "`kubectl apply -f k8s.yaml`.\n## Task Status\n- Reading `app/pager.py`."
    )
    grounded = ground(text, "sections", HISTORY)
    assert grounded.text == (
        "## Goals & Decisions\n- Fix the off-by-one in `app/pager.py`.\n## Task Status\n"
        "- Reading `app/pager.py`."
    )
    assert grounded.warnings == (
        "summary: dropped [foreign] “Then deploy with `kubectl apply -f k8s.yaml`.”",
    )
    assert not grounded.rejected


def test_an_answer_about_another_session_is_rejected() -> None:
    text = (
        "## Goals & Decisions\n- Port `src/billing/invoice.ts` to `src/billing/invoice.rs`.\n"
        "## Task Status\n- `cargo test -p billing` fails on `InvoiceLine::total`."
    )
    grounded = ground(text, "sections", HISTORY)
    assert grounded.rejected
    assert grounded.foreign == (
        "src/billing/invoice.ts", "src/billing/invoice.rs", "cargo test -p billing",
        "InvoiceLine::total",
    )  # fmt: skip
