"""Chunked summaries: a rest longer than the summarizer's own input, summarized in pieces.

A common failure of compaction elsewhere is that the part to summarize no longer fits the
summarizer's window, so the very call meant to save the session fails. Here the summarizer's
input (system prompt + user prompt) never exceeds `summary_input_budget` tokens:

- the rest is cut into rounds (a round starts at each user message that is not only tool
  results) and, within a round, units (an assistant message with tool calls and the message
  answering them are one unit; any other message is a unit of its own);
- each chunk takes whole rounds while they fit; a round too long for a chunk of its own is
  split between units, so a `tool_use` is never separated from its `tool_result`;
- a single unit larger than a whole chunk is cut (`app.core.cut`: preview + marker line);
- chunk k+1 starts with the summary of chunks 1..k as a `[Conversation compressed]` pair,
  which every summarizer already re-summarizes, so the last summary
  covers the whole rest.

Costs are the tokens of each message's transcript form (`serialize_for_summary`) plus one
for the separator; the service counts the exact prompt whenever the estimate comes within
`EXACT_CHECK_SHARE` of the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.core.assemble import SUMMARY_ACK, summary_message
from app.core.compact_json import compact_json
from app.core.cut import Count, cut_text, preview_input, preview_result
from app.core.messages import (
    ContentBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    is_tool_result_message,
    text_message,
    tool_result_text,
    tool_uses,
)
from app.core.summary.prompt import SUMMARY_SYSTEM, build_summary_prompt, serialize_for_summary

CountBatch = Callable[[Sequence[str]], list[int]]

DEFAULT_SUMMARY_INPUT_BUDGET = 100_000
EXACT_CHECK_SHARE = 0.9
# Tokens a cut block spends beyond its preview: the marker line and the transcript header.
_CUT_ALLOWANCE = 48
_CUT_ATTEMPTS = 8


@dataclass(frozen=True)
class Unit:
    """Messages that go into the same chunk, and their transcript cost."""

    messages: tuple[Message, ...]
    cost: int
    starts_round: bool


def transcript_costs(messages: Sequence[Message], count_batch: CountBatch) -> list[int]:
    """Each message's cost inside the summary prompt (its transcript + the separator)."""
    if not messages:
        return []
    texts = [serialize_for_summary([m]) for m in messages]
    return [n + 1 for n in count_batch(texts)]


def transcript_bound(message: Message, counted: int) -> int:
    """An upper bound of a message's transcript cost from its counted tokens (`tokens.py`):
    the transcript adds only a role header, block headers and tool ids (a token is at least
    one character), and shows media and redacted thinking by name instead of their cost."""
    extra = 8
    for block in message.blocks():
        extra += 8
        if isinstance(block, ToolUseBlock):
            extra += len(block.id) + len(block.name)
        elif isinstance(block, ToolResultBlock):
            extra += len(block.tool_use_id)
    return counted + extra


def prompt_overhead(max_words: int, instructions: str | None, count: Count) -> int:
    """Tokens of the summarizer's input that are not the transcript."""
    return count(SUMMARY_SYSTEM) + count(build_summary_prompt("", max_words, instructions))


def prompt_tokens(
    messages: Sequence[Message], max_words: int, instructions: str | None, count: Count
) -> int:
    """The exact size of the summarizer's input for these messages."""
    prompt = build_summary_prompt(serialize_for_summary(messages), max_words, instructions)
    return count(SUMMARY_SYSTEM) + count(prompt)


def units_of(messages: Sequence[Message], costs: Sequence[int]) -> list[Unit]:
    """Units in order; a tool call and the message answering it are one unit."""
    units: list[Unit] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        end = i + 1
        answered = any(tool_uses(message)) and end < len(messages)
        if answered and messages[end].role == "user":
            end += 1
        starts = message.role == "user" and not is_tool_result_message(message)
        units.append(Unit(tuple(messages[i:end]), sum(costs[i:end]), starts or i == 0))
        i = end
    return units


def next_chunk(units: Sequence[Unit], start: int, room: int) -> int:
    """The end (exclusive) of the chunk that begins at unit `start` within `room` tokens:
    the round in progress unit by unit, then only whole rounds. Equal to `start` when even
    the first unit does not fit (the caller cuts it)."""
    end, used = start, 0
    while end < len(units):
        if end > start and units[end].starts_round:
            round_end = end + 1
            while round_end < len(units) and not units[round_end].starts_round:
                round_end += 1
            round_cost = sum(u.cost for u in units[end:round_end])
            if used + round_cost > room:
                break
            used, end = used + round_cost, round_end
            continue
        if used + units[end].cost > room:
            break
        used, end = used + units[end].cost, end + 1
    return end


def carried_pair(summary: str, room: int, count: Count) -> tuple[Message, Message]:
    """The summary of the chunks so far, as the pair that opens the next chunk; cut to half
    the room at most, so the next chunk always has room for new messages."""
    return summary_message(cut_text(summary, room // 2, count)), text_message(
        "assistant", SUMMARY_ACK
    )


def cut_unit(
    messages: Sequence[Message], room: int, count: Count, count_batch: CountBatch
) -> tuple[Message, ...]:
    """The unit's messages with their text cut until the unit fits `room` tokens."""
    share = max(room // max(len(messages), 1) - _CUT_ALLOWANCE, 0)
    for attempt in range(_CUT_ATTEMPTS):
        tokens = share >> attempt
        cut = tuple(_cut_message(m, tokens, count) for m in messages)
        if sum(transcript_costs(cut, count_batch)) <= room:
            return cut
    return tuple(_cut_message(m, 0, count, drop_media=True) for m in messages)


def _cut_message(message: Message, tokens: int, count: Count, drop_media: bool = False) -> Message:
    blocks = message.blocks()
    share = tokens // max(len(blocks), 1)
    cut = [_cut_block(b, share, count, drop_media) for b in blocks]
    return message.model_copy(update={"content": cut})


def _cut_block(block: ContentBlock, tokens: int, count: Count, drop_media: bool) -> ContentBlock:
    if isinstance(block, TextBlock):
        return block.model_copy(update={"text": cut_text(block.text, tokens, count)})
    if isinstance(block, ThinkingBlock):
        return block.model_copy(update={"thinking": cut_text(block.thinking, tokens, count)})
    if isinstance(block, ToolUseBlock):
        fits = count(compact_json(block.input)) <= tokens
        return block if fits else preview_input(block, tokens, count)
    if isinstance(block, ToolResultBlock):
        return preview_result(block, tool_result_text(block), tokens, count)
    if drop_media:
        return TextBlock(type="text", text=f"[{block.type} block left out]")
    return block
