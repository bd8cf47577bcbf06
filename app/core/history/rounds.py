"""Rounds of a conversation: where the `tail` strategy may cut.

A round runs from a user message that is a new request (not only tool results) to the
assistant's final answer, with any number of tool calls in between. The summary pair and the
restored-file pairs (`[Conversation compressed]`, `[Restored after compact]`) are not
requests: they belong to the round before the next request.

In the Anthropic shape one user message may carry both the tool results that close the
previous round and the text that opens the next one (an OpenAI tool run followed by a user
message converts to exactly that). Such a round `opens_mid_message`: cutting before it
sends its first message's tool results with the older rounds, which keeps every
`tool_use` with its `tool_result`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.assemble import RESTORED_PREFIX, SUMMARY_PREFIX
from app.core.messages import Message, TextBlock, ToolResultBlock, tool_uses


@dataclass(frozen=True)
class Round:
    """Messages `start` (inclusive) to `end` (exclusive) of the list it was cut from."""

    start: int
    end: int
    opens_mid_message: bool = False
    complete: bool = False


def opens_round(message: Message) -> bool:
    """A user message with something besides tool results, and not one of ours."""
    if message.role != "user":
        return False
    if isinstance(message.content, str):
        return bool(message.content) and not _ours(message.content)
    others = [b for b in message.content if not isinstance(b, ToolResultBlock)]
    if not others:
        return False
    first = others[0]
    return not (isinstance(first, TextBlock) and _ours(first.text))


def carries_results(message: Message) -> bool:
    return not isinstance(message.content, str) and any(
        isinstance(b, ToolResultBlock) for b in message.content
    )


def segment_rounds(messages: Sequence[Message], start: int = 0) -> list[Round]:
    """The rounds of `messages[start:]`, oldest first. Messages before the first request
    (an earlier summary pair, say) form a round of their own."""
    starts = [i for i in range(start, len(messages)) if opens_round(messages[i])]
    if not starts or starts[0] > start:
        starts.insert(0, start)
    bounds = [s for s in starts if s < len(messages)]
    rounds = []
    for i, first in enumerate(bounds):
        end = bounds[i + 1] if i + 1 < len(bounds) else len(messages)
        mid = i > 0 and carries_results(messages[first])
        rounds.append(Round(first, end, mid, _answered(messages[end - 1])))
    return rounds


def _answered(last: Message) -> bool:
    """A round is complete once an assistant message ends it without calling a tool."""
    return last.role == "assistant" and not any(tool_uses(last))


def _ours(text: str) -> bool:
    return text.startswith((SUMMARY_PREFIX.strip(), RESTORED_PREFIX))
