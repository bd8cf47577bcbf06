"""Head + summary pair + one pair per restored file, each pair a user message and the
assistant's acknowledgement, in the exact strings below: later compactions recognize the
pairs by them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.messages import Message, text_message

SUMMARY_PREFIX = "[Conversation compressed]\n\n"
SUMMARY_ACK = "Understood. I have the context from the compressed conversation. Continuing work."
RESTORED_PREFIX = "[Restored after compact] "
RESTORED_ACK = "Noted, file content restored."


@dataclass(frozen=True)
class RestoredFile:
    """A file re-read from the work directory, as named in the history."""

    path: str
    text: str
    token_count: int


def summary_message(summary: str) -> Message:
    return text_message("user", f"{SUMMARY_PREFIX}{summary}")


def restored_file_message(path: str, text: str) -> Message:
    """The restored-file message: `[Restored after compact] {path}:\\n{content}`."""
    return text_message("user", f"{RESTORED_PREFIX}{path}:\n{text}")


def assemble_messages(
    head: Sequence[Message], summary: str, restored: Sequence[RestoredFile]
) -> list[Message]:
    """A new list; user and assistant strictly alternate after the head."""
    assembled = [*head, summary_message(summary), text_message("assistant", SUMMARY_ACK)]
    for file in restored:
        assembled.append(restored_file_message(file.path, file.text))
        assembled.append(text_message("assistant", RESTORED_ACK))
    return assembled
