"""What a replay's final context lacks: `python -m bench.missing_probe FILE STRATEGY WINDOW`.

The replay counts the ground-truth facts (`bench/replay_facts.py`) its final context holds;
to see *which* were lost, one conversation file (`<name>.<shape>.json` of a built corpus)
is replayed here as the replay does, and each fact the final context lacks is printed with
its kind, then the count per kind. Read it on dev sessions only: a held-out session's
facts are not to be read while writing rules.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Sequence

from app.adapters.tokenizer import TiktokenTokenizer
from bench.recall_probe import probe_arguments
from bench.replay import in_process
from bench.replay_driver import Conversation, _Loop, context_text
from bench.replay_facts import KINDS, extract


async def run(conversation: Conversation, strategy: str, window: int) -> list[tuple[str, str]]:
    """The (kind, fact) pairs of the conversation that the replay's final context lacks."""
    async with in_process(TiktokenTokenizer()) as service:
        loop = _Loop(service, conversation, strategy, window, TiktokenTokenizer().count, False)
        result = await loop.run()
    text = context_text(result.final_context)
    truth = extract(conversation.messages)
    return [(kind, fact) for kind in KINDS for fact in truth.by_kind[kind] if fact not in text]


def main(argv: Sequence[str] | None = None) -> int:
    conversation, strategy, window = probe_arguments("bench.missing_probe", __doc__, argv)
    missing = asyncio.run(run(conversation, strategy, window))
    for kind, fact in missing:
        print(f"missing {kind}: {fact}")
    counts = Counter(kind for kind, _ in missing)
    print("missing by kind:", ", ".join(f"{k} {counts[k]}" for k in KINDS if counts[k]) or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
