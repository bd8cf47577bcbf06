"""The wide corpus's replay report: every figure per agent kind, and the issue's targets.

`python -m bench.replay --corpus /work/corpus-wide --by-agent` replays sessions of several
agents (their files name the agent kind and the split, `bench/corpus_wide/SOURCES.md`).
Its tables: the totals per agent kind, strategy, window and shape (the figures of the
corpus-long report, plus compactions whose answer was no smaller than what was sent); and
the targets of issue 36 at 32k and 64k, both shapes together, per agent kind, for the
held-out sessions apart and for all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench.replay_driver import RunResult
from bench.replay_report import refusals_text, sent_text, share, totals

TARGET_WINDOWS = (32_000, 64_000)
STRATEGY_ORDER = ("full", "tail", "prune", "selective")
HEADS = [
    "LLM calls",
    "compactions",
    "answered by",
    "largest context sent",
    "growth",
    "invalid",
    "paths",
    "commands",
    "errors flagged",
    "errors in output",
    "first request",
    "later requests",
    "all facts",
    "missing found by recall",
]


def _cells(row: dict[str, Any]) -> list[str]:
    facts = row["facts"]
    kinds = ("path", "command", "error", "output_error", "first_request", "request", "all")
    return [
        str(row["llm_calls"]),
        str(row["compactions"]),
        refusals_text(row["answered_by"]),
        sent_text(row["max_sent_tokens"], row["window"], row["over_window"]),
        str(row["growth"]),
        str(row["invalid"] + row["final_invalid"]),
        *(share(facts[k]["kept"], facts[k]["total"]) for k in kinds),
        share(row["recalled"], row["missing"]),
    ]


def by_agent(runs: Sequence[RunResult]) -> str:
    rows = totals(runs, ("agent", "strategy", "window", "shape"))
    lines = [
        "| agent | strategy | window | shape | " + " | ".join(HEADS) + " |",
        "|---|---|---|---|" + "---|" * len(HEADS),
    ]
    for row in rows:
        head = (
            f"| {row['agent']} | {row['strategy']} | {row['window'] // 1000}k | {row['shape']} | "
        )
        lines.append(head + " | ".join(_cells(row)) + " |")
    return "\n".join(lines) + "\n"


def _kept(group: Sequence[RunResult], *kinds: str) -> str:
    kept = sum(r.facts[k][0] for r in group for k in kinds)
    total = sum(r.facts[k][1] for r in group for k in kinds)
    return share(kept, total)


def _all(group: Sequence[RunResult]) -> str:
    return _kept(group, *group[0].facts) if group else "-"


TARGET_COLUMNS: tuple[tuple[str, str, Callable[[Sequence[RunResult]], str]], ...] = (
    ("requests (first, later)", "100%", lambda g: _kept(g, "first_request", "request")),
    (
        "errors (flagged, output)",
        "≥95% full/tail, ≥90% prune/selective",
        lambda g: _kept(g, "error", "output_error"),
    ),
    ("paths", "≥98% full/tail", lambda g: _kept(g, "path")),
    ("commands", "≥90% full/tail", lambda g: _kept(g, "command")),
    ("all facts", "≥92% full/tail, ≥88% prune/selective", _all),
    (
        "missing found by recall",
        "≥99.5%",
        lambda g: share(sum(r.recalled for r in g), sum(r.missing for r in g)),
    ),
    (
        "over / growth / invalid",
        "0 / 0 / 0",
        lambda g: (
            f"{sum(r.over_window for r in g)} / {sum(r.growth for r in g)} / "
            f"{sum(r.invalid + (not r.final_valid) for r in g)}"
        ),
    ),
)


def targets(runs: Sequence[RunResult]) -> str:
    """The issue's target table: 32k and 64k, both shapes, per agent kind, held-out apart."""
    runs = [r for r in runs if r.window in TARGET_WINDOWS]
    agents = sorted({r.agent for r in runs})
    groups = [(a, [r for r in runs if r.agent == a]) for a in agents]
    groups.append(("**held-out**", [r for r in runs if r.split == "held-out"]))
    groups.append(("**all**", list(runs)))
    heads = [name for name, _, _ in TARGET_COLUMNS]
    lines = [
        "| sessions | strategy | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(heads),
        "| target | | " + " | ".join(target for _, target, _ in TARGET_COLUMNS) + " |",
    ]
    for name, group in groups:
        for strategy in STRATEGY_ORDER:
            chosen = [r for r in group if r.strategy == strategy]
            if chosen:
                cells = [measure(chosen) for _, _, measure in TARGET_COLUMNS]
                lines.append(f"| {name} | {strategy} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def sessions(runs: Sequence[RunResult]) -> str:
    """The sessions replayed: agent kind, split."""
    seen: dict[str, tuple[str, str]] = {}
    for run in runs:
        seen.setdefault(run.conversation, (run.agent, run.split))
    lines = ["| session | agent | split |", "|---|---|---|"]
    lines += [f"| {name} | {agent} | {split} |" for name, (agent, split) in seen.items()]
    return "\n".join(lines) + "\n"


def render_by_agent(runs: Sequence[RunResult]) -> str:
    return "\n".join(
        [
            "### Targets (32k and 64k, both shapes)\n",
            targets(runs),
            "### Per agent kind, strategy, window and shape\n",
            by_agent(runs),
            "### Sessions\n",
            sessions(runs),
        ]
    )
