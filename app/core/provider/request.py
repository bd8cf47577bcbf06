"""The provider request around a compaction's messages, handed back ready to send.

An agent that sends its whole Anthropic or OpenAI request gets it back in `request`: every
field as it sent it, `messages` (a Responses API request's `input`) replaced by the
compacted list. An Anthropic top-level `system` (a Responses `instructions`) is read as the
canonical list's head (`head` messages), so the answer takes it out of `messages` again,
puts it back where it was as sent, and counts the indexes it reports from the request's own
`messages`.

Ready to send means ending with a user turn: a compacted list that ends with the summary's
acknowledgement (the list sent ended with tool results, mid tool loop, or with a request
too large to keep) would be an assistant prefill, which Anthropic refuses with extended
thinking on. `request` then gets a user `Continue.` after it; `messages` stays the
compacted list, for an agent that appends its own next turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.core.assemble import CONTINUE


@dataclass(frozen=True)
class ProviderRequest:
    """A request's provider fields as sent, in the order sent (`system` included; the
    messages' field holding its place, when it came among them), how many canonical
    messages its top-level `system` (or Responses `instructions`) became (0 or 1), the
    field that holds the messages (`messages`, or the Responses API's `input`), and the
    `input` as sent when it was a string (handed back as it is when nothing changed)."""

    fields: Mapping[str, Any] = field(default_factory=dict)
    head: int = 0
    key: str = "messages"
    sent_text: str | None = None


def hand_back(data: dict[str, Any], provider: ProviderRequest) -> dict[str, Any]:
    """A result's JSON with the head taken out of `messages`, indexes counted from the
    request's `messages`, and `request` holding the provider request to send next."""
    head = provider.head
    messages = data["messages"][head:]
    out = data | {"messages": messages}
    if head:
        out["compacted_indexes"] = [
            i - head for i in data.get("compacted_indexes", ()) if i >= head
        ]
        out["refilling"] = [
            r | {"index": r["index"] - head}
            for r in data.get("refilling", ())
            if r["index"] >= head
        ]
    ending = messages[-1] if data.get("compacted") and messages else None
    prefill = isinstance(ending, dict) and ending.get("role") == "assistant"
    sent: Any = [*messages, {"role": "user", "content": CONTINUE}] if prefill else messages
    if not data.get("compacted") and provider.sent_text is not None:
        sent = provider.sent_text
    out["request"] = {**provider.fields, provider.key: sent}  # in its place, if it has one
    return out
