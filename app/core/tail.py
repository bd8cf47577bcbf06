"""The `tail` strategy's plan (seed 004 A4/A5/C6, seed 002 §5.2): keep the most recent
rounds verbatim, archive and summarize the older ones into a system message.

Cuts fall on round boundaries only (`app.core.rounds`), so a `tool_use` never loses its
`tool_result`. At least `keep_rounds` rounds are kept when they fit `target` tokens; when
they do not, fewer are kept, never fewer than the current (last) round, and a warning says
so. The leading system messages, earlier archived summaries among them, stay in the head:
they are never summarized again, and the new summary goes in after them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.messages import Message, ToolResultBlock, text_message
from app.core.prompt import ARCHIVED_TITLE
from app.core.rounds import segment_rounds

# The kept rounds may take this share of the threshold tokens: the rest leaves room for
# the head, the summary and the turns to come before the next compaction.
KEPT_SHARE = 0.5
TIMESTAMP_KEYS = ("timestamp", "created_at", "time")


@dataclass(frozen=True)
class TailPlan:
    """`older` is what the summary covers; `kept` comes back verbatim after it.

    When the first kept message also carried the tool results of the last older round,
    those results go to `older` (as a user message of their own) and `kept` starts with
    the rest of that message: that message is then the one index in `compacted_indexes`
    that is also kept."""

    older: tuple[Message, ...]
    kept: tuple[Message, ...]
    compacted_indexes: tuple[int, ...]
    kept_rounds: int
    warnings: tuple[str, ...]


def plan_tail(
    messages: Sequence[Message],
    head_length: int,
    counts: Sequence[int],
    keep_rounds: int,
    target: int,
) -> TailPlan | None:
    """None when every round would be kept (nothing older to summarize)."""
    rounds = segment_rounds(messages, head_length)
    wanted = min(keep_rounds, len(rounds))
    keep = wanted
    warnings: list[str] = []

    def tokens(k: int) -> int:
        return sum(counts[rounds[-k].start :])

    while keep > 1 and tokens(keep) > target:
        keep -= 1
    if keep < wanted:
        warnings.append(
            f"kept {keep} of the {wanted} most recent rounds asked for: {wanted} rounds take "
            f"{tokens(wanted)} tokens, over the target of {target}"
        )
    if keep == 1 and tokens(1) > target:
        warnings.append(
            f"the current round alone takes {tokens(1)} tokens, over the target of {target}: "
            "kept whole"
        )
    if keep >= len(rounds):
        return None
    first = rounds[-keep]
    cut = first.start
    older = list(messages[head_length:cut])
    kept = list(messages[cut:])
    indexes = list(range(head_length, cut))
    if first.opens_mid_message:
        results, rest = _split_results(messages[cut])
        older.append(results)
        kept[0] = rest
        indexes.append(cut)
    return TailPlan(tuple(older), tuple(kept), tuple(indexes), keep, tuple(warnings))


def _split_results(message: Message) -> tuple[Message, Message]:
    """The tool results of a user message as a message of their own, and the rest of it."""
    blocks = [] if isinstance(message.content, str) else message.content
    results = [b for b in blocks if isinstance(b, ToolResultBlock)]
    others = [b for b in blocks if not isinstance(b, ToolResultBlock)]
    return (
        Message(role="user", content=results),
        message.model_copy(update={"content": others}),
    )


def archive_span(
    messages: Sequence[Message], indexes: Sequence[int], archived_at: str
) -> tuple[str, str]:
    """`[Start Time]` and `[Cutoff Time]` of the template: the first and last archived
    messages' `metadata` timestamps when both have one, else their 1-based positions in the
    compacted list, with the time of the compaction."""
    first, last = messages[indexes[0]], messages[indexes[-1]]
    start, end = _timestamp(first.metadata), _timestamp(last.metadata)
    if start is not None and end is not None:
        return start, end
    return f"message {indexes[0] + 1}", f"message {indexes[-1] + 1}, archived {archived_at}"


def _timestamp(metadata: Mapping[str, Any] | None) -> str | None:
    for key in TIMESTAMP_KEYS:
        value = (metadata or {}).get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
    return None


def archived_header(start: str, cutoff: str) -> str:
    return f"{ARCHIVED_TITLE}\n*(Contains context from {start} to {cutoff})*"


def archived_text(header: str, body: str) -> str:
    """The header, then the summarizer's sections (without a title it may have repeated)."""
    lines = body.strip().splitlines()
    while lines and (lines[0].startswith(ARCHIVED_TITLE) or lines[0].startswith("*(Contains")):
        lines.pop(0)
    return f"{header}\n\n" + "\n".join(lines).strip()


def assemble_tail(head: Sequence[Message], summary: str, kept: Sequence[Message]) -> list[Message]:
    """Head (earlier archived summaries included), the new archived summary, kept rounds."""
    return [*head, text_message("system", summary), *kept]
