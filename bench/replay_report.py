"""Totals and the printed tables of the long-session replay."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from bench.replay_driver import RunResult
from bench.replay_facts import KINDS

FACT_HEADS = {
    "path": "paths",
    "command": "commands",
    "error": "errors flagged `is_error`",
    "output_error": "error lines in unflagged output",
    "first_request": "user's first request",
    "request": "later requests",
}


GROUPING = ("strategy", "window", "shape")


def totals(runs: Sequence[RunResult], by: Sequence[str] = GROUPING) -> list[dict[str, Any]]:
    """One row per distinct value of the fields `by` (strategy, window and shape unless
    told), over every conversation, in run order."""
    keys: list[tuple[Any, ...]] = []
    for run in runs:
        if tuple(getattr(run, f) for f in by) not in keys:
            keys.append(tuple(getattr(run, f) for f in by))
    rows = []
    for key in keys:
        group = [r for r in runs if tuple(getattr(r, f) for f in by) == key]
        window = max(r.window for r in group)
        refusals: Counter[str] = Counter()
        answered: Counter[str] = Counter()
        for run in group:
            refusals.update(run.refusals)
            answered.update(run.answered_by)
        facts = {
            kind: {
                "kept": sum(r.facts[kind][0] for r in group),
                "total": sum(r.facts[kind][1] for r in group),
            }
            for kind in KINDS
        }
        facts["all"] = {
            "kept": sum(facts[k]["kept"] for k in KINDS),
            "total": sum(facts[k]["total"] for k in KINDS),
        }
        ledger = max(r.ledger_tokens_max for r in group)
        rows.append(
            dict(zip(by, key, strict=True))
            | {
                "runs": len(group),
                "llm_calls": sum(r.llm_calls for r in group),
                "compactions": sum(r.compactions for r in group),
                "refills": sum(r.refills for r in group),
                "refusals": dict(sorted(refusals.items())),
                "answered_by": dict(sorted(answered.items())),
                "max_sent_tokens": max(r.max_sent_tokens for r in group),
                "over_window": sum(r.over_window for r in group),
                "runs_over_window": sum(1 for r in group if r.over_window),
                "growth": sum(r.growth for r in group),
                "invalid": sum(r.invalid for r in group),
                "final_invalid": sum(1 for r in group if not r.final_valid),
                "http_errors": sum(r.http_errors for r in group),
                "facts": facts,
                "first_request_kept": sum(1 for r in group if r.first_request_kept),
                "missing": sum(r.missing for r in group),
                "recalled": sum(r.recalled for r in group),
                "ledger_tokens_max": ledger,
                "ledger_share_max": round(ledger / window, 4) if "window" in by else None,
                "summary_tokens_max": max(r.summary_tokens_max for r in group),
                "wall_seconds": round(sum(r.wall_seconds for r in group), 3),
            }
        )
    return rows


def share(kept: int, total: int) -> str:
    return f"{kept}/{total} ({kept / total:.0%})" if total else "-"


def refusals_text(refusals: dict[str, int]) -> str:
    return ", ".join(f"{n} {reason}" for reason, n in refusals.items()) or "0"


def sent_text(max_sent: int, window: int, over: int) -> str:
    flag = f" **OVER ×{over}**" if over else ""
    return f"{max_sent:,} ({max_sent / window:.0%}){flag}"


def _cells(row: dict[str, Any], window: int) -> list[str]:
    facts = row["facts"]
    return [
        str(row["llm_calls"]),
        f"{row['compactions']} / {row['refills']}",
        refusals_text(row["refusals"]),
        refusals_text(row["answered_by"]),
        sent_text(row["max_sent_tokens"], window, row["over_window"]),
        str(row["invalid"]),
        *(share(facts[k]["kept"], facts[k]["total"]) for k in (*KINDS, "all")),
        share(row["recalled"], row["missing"]),
        f"{row['ledger_tokens_max']:,} ({row['ledger_tokens_max'] / window:.1%})",
        f"{row['wall_seconds']:.1f}",
    ]


HEADS = [
    "LLM calls",
    "compactions / within 3 requests of the last",
    "refusals",
    "answered by",
    "largest context sent",
    "invalid",
    *(FACT_HEADS[k] for k in KINDS),
    "all facts",
    "missing found by recall",
    "ledger max",
    "wall s",
]


def render(runs: Sequence[RunResult], rows: Sequence[dict[str, Any]]) -> str:
    """Markdown: totals per strategy, window and shape, then one row per replay."""
    lines = [
        "| strategy | window | shape | " + " | ".join(HEADS) + " |",
        "|---|---|---|" + "---|" * len(HEADS),
    ]
    for row in rows:
        head = f"| {row['strategy']} | {row['window'] // 1000}k | {row['shape']} | "
        lines.append(head + " | ".join(_cells(row, row["window"])) + " |")
    lines += [
        "",
        "| conversation | shape | strategy | window | " + " | ".join(HEADS) + " |",
        "|---|---|---|---|" + "---|" * len(HEADS),
    ]
    for run in runs:
        data = run.as_json()
        head = f"| {run.conversation} | {run.shape} | {run.strategy} | {run.window // 1000}k | "
        lines.append(head + " | ".join(_cells(data, run.window)) + " |")
    problems = [
        f"- {r.conversation} ({r.shape}, {r.strategy}, {r.window // 1000}k): {sample}"
        for r in runs
        for sample in [*r.invalid_samples, *r.error_samples]
    ]
    if problems:
        lines += ["", "Invalid compacted lists and service errors (first of each run):", ""]
        lines += problems
    return "\n".join(lines) + "\n"
