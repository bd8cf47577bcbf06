"""The issue's rows from `python -m bench.replay --json` reports: `python -m bench.replay_rows
REPORT.json [REPORT.json ...] [--windows 32000,64000]` (a later report's runs of a
conversation replace an earlier one's).

The `--by-agent` tables put each kind's dev and held-out sessions in one row and the
first request, the errors and the rest in columns of their own per window and shape;
the issue asks, per strategy, for the user's first request, the later ones, the errors
flagged and those in unflagged output, all facts and what recall finds of the missing,
with held-out sessions apart. Here each agent kind's dev and held-out sessions are rows
of their own, summed over the windows asked for and both shapes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

STRATEGIES = ("full", "tail", "prune", "selective")
KINDS = ("first_request", "request", "error", "output_error", "all")
HEAD = (
    "| sessions | strategy | compactions | first request | later requests | errors flagged "
    "| errors in output | all facts | missing found by recall |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def groups(run: dict[str, Any]) -> Iterable[str]:
    """The rows a run adds to: its kind and split, the held-out row, all."""
    held_out = run.get("split") == "held-out"
    yield f"{run.get('agent') or '?'}{' (held-out)' if held_out else ''}"
    if held_out:
        yield "**held-out**"
    yield "**all**"


def cell(kept: int, total: int) -> str:
    return "-" if total == 0 else f"{kept}/{total} ({100 * kept / total:.0f}%)"


def rows(runs: Sequence[dict[str, Any]], windows: Sequence[int]) -> str:
    sums: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(
        lambda: defaultdict(lambda: [0, 0])
    )
    for run in runs:
        if run["window"] not in windows:
            continue
        for group in groups(run):
            row = sums[group, run["strategy"]]
            for kind in KINDS:
                row[kind][0] += run["facts"][kind]["kept"]
                row[kind][1] += run["facts"][kind]["total"]
            row["recall"][0] += run["recalled"]
            row["recall"][1] += run["missing"]
            row["compactions"][0] += run["compactions"]
    names = sorted({g for g, _ in sums}, key=lambda g: (g.startswith("**"), g == "**all**", g))
    lines = [HEAD]
    for name in names:
        for strategy in STRATEGIES:
            if (name, strategy) not in sums:
                continue
            row = sums[name, strategy]
            figures = [str(row["compactions"][0])] + [cell(*row[k]) for k in (*KINDS, "recall")]
            lines.append(f"| {name} | {strategy} | {' | '.join(figures)} |")
    return "\n".join(lines) + "\n"


def latest_runs(reports: Sequence[Path]) -> list[dict[str, Any]]:
    """The runs of the reports, a later report's runs of a conversation replacing an
    earlier one's (as `python -m bench.replay --from-json` merges them)."""
    by_conversation: dict[str, list[dict[str, Any]]] = {}
    for path in reports:
        runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
        for name in dict.fromkeys(r["conversation"] for r in runs):
            by_conversation[name] = [r for r in runs if r["conversation"] == name]
    return [run for runs in by_conversation.values() for run in runs]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replay_rows", description=__doc__)
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument(
        "--windows", type=lambda t: [int(w) for w in t.split(",") if w], default=[32000, 64000]
    )
    args = parser.parse_args(argv)
    sys.stdout.write(rows(latest_runs(args.reports), args.windows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
