"""The canonical message model: the Anthropic Messages shape.

Every model is frozen, so no step of the pipeline can mutate a caller's input, and every
model allows extra fields, so whatever an agent attaches (cache_control, citations, ids of
its own) travels through untouched. Block types this service does not know are kept as
`UnknownBlock` instead of being rejected: providers add block types faster than we release
(`server_tool_use`, `compaction`, ...), and a closed union would turn each one into a 422.

`dump_message` is the one way back to JSON: it emits exactly the fields that were set,
so an unchanged message comes back equal to what was sent.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

Role = Literal["system", "user", "assistant"]

_FROZEN_OPEN = ConfigDict(frozen=True, extra="allow")


class _Block(BaseModel):
    model_config = _FROZEN_OPEN


class TextBlock(_Block):
    """Plain text."""

    type: Literal["text"]
    text: str


class ToolUseBlock(_Block):
    """A tool call made by the assistant."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ToolResultBlock(_Block):
    """The answer to a `tool_use`, sent back in the next user message."""

    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[ContentBlock] | None = None
    is_error: bool | None = None


class ThinkingBlock(_Block):
    """Extended thinking, with the provider's signature."""

    type: Literal["thinking"]
    thinking: str
    signature: str | None = None


class RedactedThinkingBlock(_Block):
    """Thinking the provider encrypted; opaque to us."""

    type: Literal["redacted_thinking"]
    data: str


class ImageBlock(_Block):
    """An image; its `source` is passed through as sent."""

    type: Literal["image"]
    source: dict[str, Any]


class DocumentBlock(_Block):
    """A document (PDF or text); its `source` is passed through as sent."""

    type: Literal["document"]
    source: dict[str, Any]


KNOWN_BLOCK_TYPES = frozenset(
    {"text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"}
)


class UnknownBlock(_Block):
    """Any block type this service does not model: kept verbatim, counted from its JSON.

    Its schema excludes the known names, so the union is one schema per `type` value and a
    validator or generator never finds a known block matching two branches (the routing
    itself is `_block_tag`)."""

    type: str = Field(json_schema_extra={"not": {"enum": [*sorted(KNOWN_BLOCK_TYPES)]}})


def _block_tag(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    if not isinstance(kind, str):
        return None  # pydantic reports the missing/invalid discriminator on `type`
    return kind if kind in KNOWN_BLOCK_TYPES else "unknown"


ContentBlock = Annotated[
    Annotated[TextBlock, Tag("text")]
    | Annotated[ToolUseBlock, Tag("tool_use")]
    | Annotated[ToolResultBlock, Tag("tool_result")]
    | Annotated[ThinkingBlock, Tag("thinking")]
    | Annotated[RedactedThinkingBlock, Tag("redacted_thinking")]
    | Annotated[ImageBlock, Tag("image")]
    | Annotated[DocumentBlock, Tag("document")]
    | Annotated[UnknownBlock, Tag("unknown")],
    Discriminator(
        _block_tag,
        custom_error_type="invalid_block",
        custom_error_message=("each content block needs a string `type`"),
    ),
]

ToolResultBlock.model_rebuild()


class Message(BaseModel):
    """One message. `id` and `metadata` are optional and preserved as sent."""

    model_config = _FROZEN_OPEN

    role: Role
    content: str | list[ContentBlock]
    id: str | None = None
    metadata: dict[str, Any] | None = None

    def blocks(self) -> Sequence[ContentBlock]:
        """The content as blocks; a plain string reads as one text block."""
        if isinstance(self.content, str):
            return (TextBlock(type="text", text=self.content),)
        return self.content


def text_message(role: Role, text: str) -> Message:
    """A message whose content is one plain string (what the assembler emits)."""
    return Message(role=role, content=text)


def dump_message(message: Message) -> dict[str, Any]:
    """JSON-ready dict with exactly the fields that were set: the input comes back as sent,
    a number kept with its literal (app/core/json_numbers.py) still holding it."""
    return message.model_dump(exclude_unset=True)


def dump_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [dump_message(m) for m in messages]


def tool_uses(message: Message) -> Iterator[ToolUseBlock]:
    """The `tool_use` blocks of an assistant message, in order."""
    if message.role != "assistant" or isinstance(message.content, str):
        return
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            yield block


def is_tool_result_message(message: Message) -> bool:
    """A user message that only carries tool results (not a new request from the user)."""
    if message.role != "user" or isinstance(message.content, str) or not message.content:
        return False
    return all(isinstance(b, ToolResultBlock) for b in message.content)


def block_text(block: ContentBlock) -> str:
    """The human-readable text of a block ('' for blocks that carry none)."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ThinkingBlock):
        return block.thinking
    if isinstance(block, ToolResultBlock):
        return tool_result_text(block)
    return ""


def tool_result_text(block: ToolResultBlock) -> str:
    """The text of a tool result, whether its content is a string or blocks."""
    if block.content is None:
        return ""
    if isinstance(block.content, str):
        return block.content
    return "\n".join(t for t in (block_text(b) for b in block.content) if t)


def message_text(message: Message) -> str:
    """All human-readable text of a message, blocks joined by newlines."""
    if isinstance(message.content, str):
        return message.content
    return "\n".join(t for t in (block_text(b) for b in message.content) if t)
