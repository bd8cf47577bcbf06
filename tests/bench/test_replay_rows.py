"""The issue's rows: each kind's dev and held-out sessions apart, summed over windows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.replay_rows import latest_runs, rows


def run(agent: str, split: str, window: int, kept: int, missing: int) -> dict[str, Any]:
    facts = {k: {"kept": 0, "total": 0} for k in ("first_request", "output_error", "error")}
    facts["request"] = {"kept": kept, "total": 4}
    facts["all"] = {"kept": kept, "total": 4}
    return {
        "agent": agent,
        "split": split,
        "window": window,
        "strategy": "full",
        "facts": facts,
        "compactions": 1,
        "missing": missing,
        "recalled": missing,
    }


def test_held_out_sessions_are_rows_of_their_own_and_other_windows_are_left_out() -> None:
    runs = [
        run("aider", "dev", 32000, 4, 0),
        run("aider", "held-out", 32000, 3, 1),
        run("aider", "held-out", 64000, 4, 0),
        run("aider", "held-out", 8000, 0, 4),  # not a window asked for
    ]
    assert rows(runs, [32000, 64000]).splitlines()[2:] == [
        "| aider | full | 1 | - | 4/4 (100%) | - | - | 4/4 (100%) | - |",
        "| aider (held-out) | full | 2 | - | 7/8 (88%) | - | - | 7/8 (88%) | 1/1 (100%) |",
        "| **held-out** | full | 2 | - | 7/8 (88%) | - | - | 7/8 (88%) | 1/1 (100%) |",
        "| **all** | full | 3 | - | 11/12 (92%) | - | - | 11/12 (92%) | 1/1 (100%) |",
    ]


def test_a_later_reports_runs_of_a_conversation_replace_the_earlier_ones(tmp_path: Path) -> None:
    first, second = tmp_path / "1.json", tmp_path / "2.json"
    old = {**run("aider", "dev", 32000, 1, 0), "conversation": "a"}
    other = {**run("roo", "dev", 32000, 4, 0), "conversation": "b"}
    new = {**run("aider", "dev", 32000, 4, 0), "conversation": "a"}
    first.write_text(json.dumps({"runs": [old, other]}), encoding="utf-8")
    second.write_text(json.dumps({"runs": [new]}), encoding="utf-8")
    assert latest_runs([first, second]) == [new, other]
