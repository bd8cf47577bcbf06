"""Cutting text, tool inputs and tool results down to a token budget, visibly.

A cut keeps the beginning (a preview) and ends with a marker line that says what was cut,
so the model reading the history knows it sees a part, and the next compaction knows the
item was already cut and leaves it alone (no double truncation). The
marker is plain text inside the content, never an extra field: providers reject unknown
fields on content blocks, and a field would not survive the OpenAI dialect's tool messages.

Items that another step marked (a `compacted_at` or `truncated` field, as a prune step or
an agent's own formatter may set) count as cut too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.core.compact_json import compact_json
from app.core.messages import ContentBlock, TextBlock, ToolResultBlock, ToolUseBlock
from app.core.provider import BOOKKEEPING

Count = Callable[[str], int]

CUT_TAG = "[truncated by context-compact:"
PREVIEW_KEY = "_preview"
MARKED_FIELDS = ("compacted_at", "truncated")
# A token is rarely longer than this many characters: the search for a prefix of n tokens
# starts within n * this many characters, so cutting a huge text costs a few small counts.
_CHARS_PER_TOKEN_BOUND = 16


def cut_note(original_tokens: int, kept_tokens: int) -> str:
    return (
        f"{CUT_TAG} {original_tokens} tokens, the first {kept_tokens} kept; "
        "the original is in the archive]"
    )


def prefix_within(text: str, tokens: int, count: Count) -> str:
    """The longest prefix of `text` (by characters) that costs at most `tokens` tokens."""
    if tokens <= 0:
        return ""
    if count(text) <= tokens:
        return text
    high = min(len(text), tokens * _CHARS_PER_TOKEN_BOUND)
    if count(text[:high]) <= tokens:  # unusually long tokens: search the whole text
        high = len(text)
    low = 0  # invariant: text[:low] fits, text[:high] does not (or high == len(text))
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[:middle]) <= tokens:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def cut_text(text: str, tokens: int, count: Count) -> str:
    """`text` when it fits `tokens`; else its first `tokens` tokens and the marker line."""
    total = count(text)
    if total <= tokens:
        return text
    return f"{prefix_within(text, tokens, count).rstrip()}\n{cut_note(total, tokens)}"


def is_marked(block: ContentBlock) -> bool:
    """Whether the block was already cut or cleared (by us or by another step)."""
    extra = block.model_extra or {}
    if any(field in extra for field in MARKED_FIELDS):
        return True
    if isinstance(block, ToolUseBlock):
        return PREVIEW_KEY in block.input
    if isinstance(block, ToolResultBlock):
        content = block.content
        if isinstance(content, str):
            return CUT_TAG in content
        return any(isinstance(b, TextBlock) and CUT_TAG in b.text for b in content or ())
    if isinstance(block, TextBlock):
        return CUT_TAG in block.text
    return False


def preview_input(block: ToolUseBlock, tokens: int, count: Count) -> ToolUseBlock:
    """The call with its input replaced by `{"_preview": first tokens of its JSON + marker}`.

    The input stays a JSON object (providers require one); an OpenAI call's raw arguments,
    kept by the dialect, are rewritten to match so the answer shows the preview too.
    """
    text = compact_json(block.input)
    preview = {PREVIEW_KEY: cut_text(text, tokens, count)}
    update: dict[str, Any] = {"input": preview}
    note = (block.model_extra or {}).get(BOOKKEEPING)
    if isinstance(note, dict) and isinstance(note.get("call"), dict):
        call = note["call"]
        function = dict(call.get("function") or {})
        function["arguments"] = json.dumps(preview, ensure_ascii=False)
        update[BOOKKEEPING] = {**note, "call": {**call, "function": function}}
    return block.model_copy(update=update)


def preview_result(block: ToolResultBlock, text: str, tokens: int, count: Count) -> ToolResultBlock:
    """The result with its content replaced by the cut text (a string: its blocks' text)."""
    return block.model_copy(update={"content": cut_text(text, tokens, count)})
