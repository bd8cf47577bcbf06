"""A ledger standing alone in the list, right after the head: what `selective` writes when
its rules reach the threshold without a summary, so the facts of what they dropped (a
failure, a path, a command) stay in the context. A system message, or in the Anthropic
shape (its messages take no system role) a user turn and its acknowledgement
(`app.core.assemble.summary_turns`).

On the next compaction the earlier one is read back as an earlier summary holding it
(`app.core.ledger.extract.previous_ledgers`), merged with the new facts and replaced, never
stacked: `standing_end` finds one in the user-turn form, right after the head.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.assemble import SUMMARY_ACK, SUMMARY_PREFIX, summary_turn, summary_turns
from app.core.ledger.lines import LEDGER_HEADING
from app.core.messages import Message, TextBlock, text_message
from app.core.vocabulary import Format


def _text(message: Message) -> str:
    return "\n".join(b.text for b in message.blocks() if isinstance(b, TextBlock)).strip()


def is_ledger_message(message: Message) -> bool:
    """A standing ledger, in either form."""
    text = _text(message)
    if message.role == "user":
        return text.startswith(summary_turn(f"{LEDGER_HEADING}\n"))
    return message.role == "system" and text.startswith(f"{LEDGER_HEADING}\n")


def ledger_turns(text: str, fmt: Format) -> list[Message]:
    """The standing ledger's messages, in the form the format takes."""
    return summary_turns(text.strip(), user_turn=fmt == "anthropic")


def standing_end(messages: Sequence[Message], head_length: int) -> int:
    """Where the head ends once a standing ledger right after it, in the user-turn form
    with its acknowledgement, is counted in: `head_length`, or two more."""
    pair = messages[head_length : head_length + 2]
    if len(pair) == 2 and is_ledger_message(pair[0]) and _text(pair[1]) == SUMMARY_ACK:
        return head_length + 2
    return head_length


def standing_indexes(head: Sequence[Message]) -> list[int]:
    """The standing ledgers of a head and the acknowledgement after one in the user form."""
    found: list[int] = []
    for i, message in enumerate(head):
        if is_ledger_message(message):
            found.append(i)
            if message.role == "user" and i + 1 < len(head):
                found.append(i + 1)
    return found


def without_standing(head: Sequence[Message]) -> list[Message]:
    dropped = set(standing_indexes(head))
    return [m for i, m in enumerate(head) if i not in dropped]


def carried_ledger(message: Message) -> Message:
    """A message holding a ledger (one standing alone, or `tail`'s archived summary folded
    into the next) as an earlier summary: its facts are read back, and none of it counts
    as the user's words."""
    text = _text(message)
    prefix = "" if text.startswith(SUMMARY_PREFIX.strip()) else SUMMARY_PREFIX
    return text_message("user", f"{prefix}{text}")
