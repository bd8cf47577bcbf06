"""One deterministic serialization of a message for counting, used everywhere.

The count of a list is the sum of the counts of its messages, and a message's count is the
token count of `count_text(message)`: its role on one line, then each block's text. Counts
therefore add up: counting a list after appending one message costs that message only, and
the same conversation counts the same in every dialect that converts to this model.

What each block contributes:
- text, thinking: the text; redacted_thinking: its opaque data (the provider bills it);
- tool_use: the tool name and its input as compact, key-sorted JSON;
- tool_result: its content, recursively;
- image: a fixed estimate (the provider sizes images by pixels, not by their base64);
- document: its text when the source is text, otherwise the same fixed estimate;
- OpenAI image parts (image_url): the image estimate;
- any other unknown block: its compact, key-sorted JSON.

Fields a dialect keeps for its round trip (`x-openai`) are never read here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.core.compact_json import compact_json
from app.core.messages import (
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from app.core.ports import Tokenizer
from app.core.provider import BOOKKEEPING

# Anthropic documents ~(width*height)/750 tokens for an image, capped near 1,600 for the
# largest size it accepts unscaled; counting the base64 payload instead would inflate a
# screenshot to hundreds of thousands of tokens.
MEDIA_TOKEN_ESTIMATE = 1600
MEDIA_PLACEHOLDER = "[media]"
# OpenAI's image parts, kept as unknown blocks, cost what an image block costs.
MEDIA_PART_TYPES = frozenset({"image_url", "input_image"})


def _block_count_text(block: ContentBlock) -> tuple[str, int]:
    """Text to tokenize for one block, plus a fixed token surcharge (media)."""
    if isinstance(block, TextBlock):
        return block.text, 0
    if isinstance(block, ThinkingBlock):
        return block.thinking, 0
    if isinstance(block, RedactedThinkingBlock):
        return block.data, 0
    if isinstance(block, ToolUseBlock):
        return f"{block.name} {compact_json(block.input)}", 0
    if isinstance(block, ToolResultBlock):
        if block.content is None:
            return "", 0
        if isinstance(block.content, str):
            return block.content, 0
        parts = [_block_count_text(b) for b in block.content]
        return "\n".join(t for t, _ in parts), sum(extra for _, extra in parts)
    if isinstance(block, ImageBlock):
        return MEDIA_PLACEHOLDER, MEDIA_TOKEN_ESTIMATE
    if isinstance(block, DocumentBlock):
        source = block.source
        if source.get("type") == "text" and isinstance(source.get("data"), str):
            return source["data"], 0
        return MEDIA_PLACEHOLDER, MEDIA_TOKEN_ESTIMATE
    if block.type in MEDIA_PART_TYPES:
        return MEDIA_PLACEHOLDER, MEDIA_TOKEN_ESTIMATE
    data = block.model_dump(mode="json", exclude_unset=True)
    data.pop(BOOKKEEPING, None)
    return compact_json(data), 0


def count_text(message: Message) -> tuple[str, int]:
    """The text whose tokens a message costs, and the fixed surcharge of its media."""
    if isinstance(message.content, str):
        return f"{message.role}\n{message.content}", 0
    parts = [_block_count_text(b) for b in message.content]
    body = "\n".join(t for t, _ in parts)
    return f"{message.role}\n{body}", sum(extra for _, extra in parts)


def count_messages(tokenizer: Tokenizer, messages: Sequence[Message]) -> list[int]:
    """Token count of each message, in order (batched through the tokenizer)."""
    if not messages:
        return []
    texts, extras = zip(*(count_text(m) for m in messages), strict=True)
    return [n + extra for n, extra in zip(tokenizer.count_batch(texts), extras, strict=True)]


def count_total(tokenizer: Tokenizer, messages: Sequence[Message]) -> int:
    """Token count of a whole list: the sum of its messages (0 for an empty list)."""
    return sum(count_messages(tokenizer, messages))


def tool_texts(tools: Sequence[Mapping[str, Any]]) -> list[str]:
    """What each tool definition costs: its compact, key-sorted JSON (name, description and
    schema alike). The provider renders tools into its own prompt format, so this is an
    approximation of what it bills, in either shape."""
    return [compact_json(dict(tool)) for tool in tools]
