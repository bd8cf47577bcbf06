"""The provider request around a compaction's messages, handed back ready to send.

An agent that sends its whole Anthropic or OpenAI request gets it back in `request`: every
field as it sent it, `messages` replaced by the compacted list. An Anthropic top-level
`system` is read as the canonical list's head (`head` messages), so the answer takes it out
of `messages` again, puts it back in `system` as sent, and counts the indexes it reports
from the request's own `messages`.

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
    """A request's provider fields as sent, in the order sent (`system` included;
    `messages` holding its place, when it came among them), and how many canonical messages
    its top-level `system` became (0 or 1)."""

    fields: Mapping[str, Any] = field(default_factory=dict)
    head: int = 0


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
    sent = [*messages, {"role": "user", "content": CONTINUE}] if prefill else messages
    out["request"] = {**provider.fields, "messages": sent}  # in its place, if it has one
    return out
