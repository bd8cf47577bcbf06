"""A request's prompt as the provider reads it: an ordered list of segments.

Counting, windows and prompt caching all work on the same list, in the provider's own
order: Anthropic puts tools, then `system`, then each content block of each message (a
string content is one block); OpenAI chat puts tools, then each message; the Responses API
puts tools, `instructions`, then each input item. A segment carries the text the model
reads (the tokens counted), a canonical form of what it is (`cache_control` left out, so
moving a breakpoint never changes a prefix) and whether a cache breakpoint sits on it.
A message's first segment starts with its role, so the role is counted and hashed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import orjson


@dataclass(frozen=True)
class Segment:
    text: str  # what is counted
    canon: bytes  # what is compared and hashed
    breakpoint: bool = False


def canonical(value: Any) -> bytes:
    """What a value is, for comparing: sorted keys, no `cache_control`, compact."""
    return orjson.dumps(_without_cache_control(value), option=orjson.OPT_SORT_KEYS)


def readable(value: Any) -> str:
    """A value as the model reads it, for counting: JSON as written, `cache_control` aside."""
    return json.dumps(_without_cache_control(value), ensure_ascii=False)


def chain(segments: list[Segment]) -> list[str]:
    """The hash of every prefix: `[h(s0), h(s0 s1), ...]`."""
    hashes: list[str] = []
    digest = hashlib.sha256()
    for segment in segments:
        digest.update(segment.canon)
        digest.update(b"\x00")
        hashes.append(digest.copy().hexdigest())
    return hashes


def anthropic_segments(body: dict[str, Any]) -> list[Segment]:
    segments = [_whole(tool) for tool in _list(body.get("tools"))]
    system = body.get("system")
    if isinstance(system, str) and system:
        segments.append(Segment(system, canonical({"system": system})))
    for block in _list(system):
        segments.append(_block(block, "system: "))
    for message in _list(body.get("messages")):
        if not isinstance(message, dict):
            continue
        role = f"{message.get('role')}: "
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for i, block in enumerate(_list(blocks)):
            segments.append(_block(block, role if i == 0 else ""))
    if isinstance(body.get("cache_control"), dict) and segments:
        last = segments[-1]  # automatic caching: a breakpoint on the last block
        segments[-1] = Segment(last.text, last.canon, True)
    return segments


def openai_chat_segments(body: dict[str, Any]) -> list[Segment]:
    segments = [_whole(tool) for tool in _list(body.get("tools"))]
    for message in _list(body.get("messages")):
        if isinstance(message, dict):
            text = f"{message.get('role')}: {_text(message.get('content'))}"
            if message.get("tool_calls"):
                text += readable(message["tool_calls"])
            segments.append(Segment(text, canonical(message)))
    return segments


def openai_responses_segments(body: dict[str, Any]) -> list[Segment]:
    segments = [_whole(tool) for tool in _list(body.get("tools"))]
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        text = body["instructions"]
        segments.append(Segment(f"developer: {text}", canonical({"instructions": text})))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in _list(items):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            text = f"{item.get('name')} {item.get('arguments', '')}"
        elif item.get("type") == "function_call_output":
            text = _text(item.get("output"))
        else:
            text = f"{item.get('role')}: {_text(item.get('content'))}"
        segments.append(Segment(text, canonical(item)))
    return segments


def _block(block: Any, prefix: str) -> Segment:
    if not isinstance(block, dict):
        return Segment(prefix + readable(block), canonical(block))
    kind = block.get("type")
    if kind == "text":
        text = str(block.get("text", ""))
    elif kind == "thinking":
        text = str(block.get("thinking", ""))
    elif kind == "tool_use":
        text = f"{block.get('name')} {readable(block.get('input'))}"
    elif kind == "tool_result":
        text = _text(block.get("content"))
    else:
        text = readable(block)
    return Segment(prefix + text, canonical({"p": prefix, "b": block}), "cache_control" in block)


def _whole(item: Any) -> Segment:
    breakpoint = isinstance(item, dict) and "cache_control" in item
    return Segment(readable(item), canonical(item), breakpoint)


def _text(content: Any) -> str:
    """The readable text of a content: a string, or the texts of its parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_part_text(part) for part in content)
    return readable(content)


def _part_text(part: Any) -> str:
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return str(part["text"])
    if isinstance(part, dict) and part.get("type") == "tool_result":
        return _text(part.get("content"))
    return readable(part)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_control(v) for v in value]
    return value
