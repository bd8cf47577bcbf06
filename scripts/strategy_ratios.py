"""Print each strategy's compaction ratio per corpus transcript, as a markdown table.

Usage: python scripts/strategy_ratios.py [CORPUS_DIR]   (default: tests/data/corpus)

Runs the real service in-process (extractive summarizer, offline tokenizer) with
`force: true` and settings small enough that every strategy compacts: `tail` keeps 1
round, `prune` keeps 1 tool use, `selective` keeps 2 tool blocks and messages of each kind
(rules only: the transcripts are far below the default window), `selective+summary` the
same with a 1,000-token window, so the summary fallback runs after the rules.
Ratio = tokens after / tokens before. Archives go to a temporary directory that is removed
at the end.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from app.api.dialect import read_messages
from app.core.options.compact import CompactOptions
from app.service.compaction import CompactRequest
from app.settings import Settings
from app.wiring.service import build_service

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "corpus"
STRATEGIES: dict[str, CompactOptions] = {
    "full": CompactOptions(strategy="full"),
    "tail": CompactOptions(strategy="tail", tail_keep_recent_rounds=1),
    "prune": CompactOptions(strategy="prune", prune_keep_recent=1),
    "selective": CompactOptions(strategy="selective", selective_keep_recent=2),
    "selective+summary": CompactOptions(
        strategy="selective", selective_keep_recent=2, context_window=1000
    ),
}


async def table(transcripts: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "| transcript | tokens | " + " | ".join(STRATEGIES) + " |",
        "|---|---:|" + "---:|" * len(STRATEGIES),
    ]
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(_env_file=None, data_dir=data, summarizer="extractive")  # type: ignore[call-arg]
        service = build_service(settings)
        for name, raw in transcripts.items():
            messages, fmt = read_messages(raw, "auto")
            cells = []
            tokens = 0
            for options in STRATEGIES.values():
                request = CompactRequest(messages=messages, options=options, force=True, format=fmt)
                result = await service.compact(request)
                tokens = result.token_count
                cells.append(f"{result.stats.compaction_ratio:.3f}" if result.stats else "-")
            lines.append(f"| {name} | {tokens} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    corpus = Path(argv[1]) if len(argv) > 1 else CORPUS
    transcripts = {
        path.name: json.loads(path.read_text(encoding="utf-8"))["messages"]
        for path in sorted(corpus.glob("*.json"))
    }
    print(asyncio.run(table(transcripts)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
