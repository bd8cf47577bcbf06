"""`tail`'s earlier archived summaries, whatever role their turn has: a system message in
the OpenAI shapes, a user turn `[Conversation compressed]` and its acknowledgement in the
Anthropic shape (`app.core.assemble.summary_turns`).

`tail` keeps its own archives as sent: a second compaction that summarized the first
archive as an ordinary turn would read the session's original goal as an old task and a
later one's in its place. So the archives right after the system prompt count as head
(`archived_end`), and they are summarized again only when together they are folded
(`archived_groups`, the strategy decides when)."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.assemble import SUMMARY_ACK, SUMMARY_FRAMING, SUMMARY_PREFIX
from app.core.messages import Message, TextBlock
from app.core.summary import ARCHIVED_TITLE


def _text(message: Message) -> str:
    if isinstance(message.content, str):
        return message.content.strip()
    return "\n".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()


def is_archived_system(message: Message) -> bool:
    return message.role == "system" and _text(message).startswith(ARCHIVED_TITLE)


def is_archived_turn(message: Message) -> bool:
    """The user turn of an archived summary: the marker, the framing (absent from turns
    written before it was added), then the archive's title."""
    if message.role != "user":
        return False
    text = _text(message)
    if not text.startswith(SUMMARY_PREFIX.strip()):
        return False
    body = text[len(SUMMARY_PREFIX.strip()) :].lstrip()
    if body.startswith(SUMMARY_FRAMING):
        body = body[len(SUMMARY_FRAMING) :].lstrip()
    return body.startswith(ARCHIVED_TITLE)


def archived_end(messages: Sequence[Message], head_length: int) -> int:
    """Where the head ends once the archived user turns right after it, each with its
    acknowledgement, are counted in (`head_length` when there are none)."""
    end = head_length
    while end + 1 < len(messages):
        turn, ack = messages[end], messages[end + 1]
        if not (is_archived_turn(turn) and ack.role == "assistant" and _text(ack) == SUMMARY_ACK):
            break
        end += 2
    return end


def archived_groups(head: Sequence[Message]) -> list[tuple[int, ...]]:
    """The archived summaries of a head as index groups: a system message alone, a user
    turn with its acknowledgement."""
    groups: list[tuple[int, ...]] = []
    for i, message in enumerate(head):
        if is_archived_system(message):
            groups.append((i,))
        elif is_archived_turn(message) and i + 1 < len(head):
            groups.append((i, i + 1))
    return groups
