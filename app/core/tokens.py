"""One deterministic serialization of a message for counting, used everywhere.

The count of a list is the sum of the counts of its messages, and a message's count is the
token count of `count_text(message)` plus its fixed surcharge: its role on one line, then
each block's text. Counts therefore add up: counting a list after appending one message
costs that message only, and the same conversation counts the same in every dialect that
converts to this model. A request with messages costs `REPLY_PRIMING` more.

It follows OpenAI's published recipe ("How to count tokens with tiktoken"), which OpenAI's
own counts meet: `MESSAGE_OVERHEAD` tokens per message beside its role and content. What
each block contributes:
- text, thinking: the text; redacted_thinking: its opaque data (the provider bills it);
- tool_use: the tool name and its arguments as sent (an OpenAI call's `arguments` string,
  else the input as JSON with the separators SDKs send), never a re-serialized compact
  form, plus a message's overhead: the provider renders each call as a message of its own;
- tool_result: the id it answers and its content, recursively, plus a message's overhead
  (OpenAI sends each result as a `tool` message);
- image, OpenAI image parts: by the provider's rule from the image's own size
  (`app.core.provider.media`), never by its base64;
- document: its text when the source is text or content blocks, else its pages (a PDF);
- OpenAI file parts: their pages (a PDF);
- any other unknown block: its compact, key-sorted JSON.

Fields a dialect keeps for its round trip (`x-openai`) are never read here, but for the
arguments string an OpenAI call was sent with.
"""

from __future__ import annotations

import json
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
from app.core.provider import (
    BOOKKEEPING,
    FILE_PART_TYPES,
    IMAGE_PART_TYPES,
    MEDIA_PLACEHOLDER,
    anthropic_image_tokens,
    document_text,
    openai_file_part_tokens,
    openai_image_part_tokens,
    pdf_source_tokens,
    source_size,
)

MESSAGE_OVERHEAD = 3
"""Tokens each message costs beside its role and content (OpenAI's recipe:
`<|start|>{role}<|message|>{content}<|end|>`)."""
REPLY_PRIMING = 3
"""Tokens a request with messages costs once: every reply is primed with
`<|start|>assistant<|message|>`."""


def _block_count_text(block: ContentBlock) -> tuple[str, int]:
    """Text to tokenize for one block, plus a fixed token surcharge."""
    if isinstance(block, TextBlock):
        return block.text, 0
    if isinstance(block, ThinkingBlock):
        return block.thinking, 0
    if isinstance(block, RedactedThinkingBlock):
        return block.data, 0
    if isinstance(block, ToolUseBlock):
        return f"{block.name}\n{_arguments(block)}", MESSAGE_OVERHEAD
    if isinstance(block, ToolResultBlock):
        text, extra = _result_text(block)
        return f"{block.tool_use_id}\n{text}", extra + MESSAGE_OVERHEAD
    if isinstance(block, ImageBlock):
        return MEDIA_PLACEHOLDER, anthropic_image_tokens(source_size(block.source))
    if isinstance(block, DocumentBlock):
        return _document(block.source)
    if block.type in IMAGE_PART_TYPES:
        return MEDIA_PLACEHOLDER, openai_image_part_tokens(block.model_extra or {})
    if block.type in FILE_PART_TYPES:
        return MEDIA_PLACEHOLDER, openai_file_part_tokens(block.model_extra or {})
    data = block.model_dump(mode="json", exclude_unset=True)
    data.pop(BOOKKEEPING, None)
    return compact_json(data), 0


def _arguments(block: ToolUseBlock) -> str:
    """A call's arguments as sent: the OpenAI call's own string when the call came so."""
    note = (block.model_extra or {}).get(BOOKKEEPING)
    call = note.get("call") if isinstance(note, dict) else None
    function = call.get("function") if isinstance(call, dict) else None
    sent = function.get("arguments") if isinstance(function, dict) else None
    if isinstance(sent, str):
        return sent
    return json.dumps(block.input, ensure_ascii=False)


def _result_text(block: ToolResultBlock) -> tuple[str, int]:
    if block.content is None:
        return "", 0
    if isinstance(block.content, str):
        return block.content, 0
    parts = [_block_count_text(b) for b in block.content]
    return "\n".join(t for t, _ in parts), sum(extra for _, extra in parts)


def _document(source: Mapping[str, Any]) -> tuple[str, int]:
    """A document's text (text or content sources), else its pages as a PDF."""
    text = document_text(source)
    return (text, 0) if text is not None else (MEDIA_PLACEHOLDER, pdf_source_tokens(source))


def count_text(message: Message) -> tuple[str, int]:
    """The text whose tokens a message costs, and its fixed surcharge (the message's
    overhead, its calls' and results' overheads, its media)."""
    if isinstance(message.content, str):
        return f"{message.role}\n{message.content}", MESSAGE_OVERHEAD
    parts = [_block_count_text(b) for b in message.content]
    body = "\n".join(t for t, _ in parts)
    return f"{message.role}\n{body}", MESSAGE_OVERHEAD + sum(extra for _, extra in parts)


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
