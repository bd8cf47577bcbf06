"""A ledger standing alone in the list, as a system message after the head: what
`selective` writes when its rules reach the threshold without a summary, so the facts of
what they dropped (a failure, a path, a command) stay in the context.

On the next compaction the earlier one is read back as an earlier summary holding it
(`app.core.ledger.extract.previous_ledgers`), merged with the new facts and replaced, never
stacked.
"""

from __future__ import annotations

from app.core.assemble import SUMMARY_PREFIX
from app.core.ledger.extract import LEDGER_HEADING
from app.core.messages import Message, TextBlock, text_message


def _text(message: Message) -> str:
    return "\n".join(b.text for b in message.blocks() if isinstance(b, TextBlock)).strip()


def is_ledger_message(message: Message) -> bool:
    return message.role == "system" and _text(message).startswith(f"{LEDGER_HEADING}\n")


def ledger_message(text: str) -> Message:
    return text_message("system", text.strip())


def carried_ledger(message: Message) -> Message:
    """A system message holding a ledger (one standing alone, or `tail`'s archived summary
    folded into the next) as an earlier summary: its facts are read back, and none of it
    counts as the user's words."""
    return text_message("user", f"{SUMMARY_PREFIX}{_text(message)}")
