"""One agent session as provider-valid messages, in both shapes.

A converter feeds events in the order they happened (`user`, `say`, `call`); the
transcript makes them a list the providers accept: roles alternate, the first message is
the user's, every tool call is answered by its result in the very next message, no text
is empty. What the user (or the harness, in the user's turn) writes after a tool result
joins the result's message, as Cline and Roo Code send it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

Msg = dict[str, Any]


@dataclass
class Transcript:
    """Messages in the Anthropic shape, built event by event."""

    messages: list[Msg] = field(default_factory=list)
    calls: int = 0

    def _last(self, role: str) -> Msg | None:
        return self.messages[-1] if self.messages and self.messages[-1]["role"] == role else None

    def user(self, text: str) -> None:
        """Text in the user's turn (the user's words, or the harness's)."""
        text = text.strip()
        if not text:
            return
        last = self._last("user")
        if last is None:
            self.messages.append({"role": "user", "content": [{"type": "text", "text": text}]})
        else:
            last["content"].append({"type": "text", "text": text})

    def say(self, text: str) -> None:
        """The assistant's text."""
        text = text.strip()
        if not text:
            return
        if not self.messages:
            self.user("(the session starts with the assistant)")
        last = self._last("assistant")
        if last is None:
            self.messages.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
        else:
            last["content"].append({"type": "text", "text": text})

    def call(
        self, name: str, arguments: dict[str, Any], result: str, is_error: bool = False
    ) -> None:
        """A tool call and its result, answered in the next message."""
        if not self.messages:
            self.user("(the session starts with the assistant)")
        self.calls += 1
        call_id = f"toolu_{self.calls:04d}"
        use = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        last = self._last("assistant")
        if last is None:
            self.messages.append({"role": "assistant", "content": [use]})
        else:
            last["content"].append(use)
        answer: Msg = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": result if result.strip() else "(no output)",
        }
        if is_error:
            answer["is_error"] = True
        self.messages.append({"role": "user", "content": [answer]})

    def anthropic(self) -> list[Msg]:
        return [_plain_user(m) for m in self.messages]

    def openai(self) -> list[Msg]:
        return to_openai(self.messages)


def _plain_user(message: Msg) -> Msg:
    """A user message of text blocks only, as one string (how most agents send it)."""
    blocks = message["content"]
    if message["role"] == "user" and all(b["type"] == "text" for b in blocks):
        return {"role": "user", "content": "\n\n".join(b["text"] for b in blocks)}
    return message


def to_openai(messages: list[Msg]) -> list[Msg]:
    """Chat Completions messages: tool calls on the assistant, one `tool` message per
    result (no error flag: that shape has none), the user's text after them."""
    out: list[Msg] = []
    for message in messages:
        blocks = message["content"]
        texts = "\n\n".join(b["text"] for b in blocks if b["type"] == "text")
        if message["role"] == "assistant":
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": json.dumps(b["input"])},
                }
                for b in blocks
                if b["type"] == "tool_use"
            ]
            item: Msg = {"role": "assistant", "content": texts or None}
            if calls:
                item["tool_calls"] = calls
            out.append(item)
            continue
        for block in blocks:
            if block["type"] == "tool_result":
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": block["tool_use_id"],
                        "content": block["content"],
                    }
                )
        if texts:
            out.append({"role": "user", "content": texts})
    return out
