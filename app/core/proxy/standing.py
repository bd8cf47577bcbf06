"""The agent's standing instructions: project rules it sends in its messages, which every
request must carry to the model as sent, whether the message they came in is kept or
summarized.

Each is a span of a user message's text, as the agent writes it:
- Claude Code: the context reminder of the conversation's first user message,
  `<system-reminder>` ... `</system-reminder>` holding its CLAUDE.md files under its own
  header ("Codebase and user instructions are shown below."), whether the section is
  written `# claudeMd` or `<context name="claudeMd">` (its other reminders are not rules);
- Codex (`codex-rs` `UserInstructions`, `EnvironmentContext`): the AGENTS.md message,
  `# AGENTS.md instructions for <dir>` ... `</INSTRUCTIONS>`, `<user_instructions>` ...
  `</user_instructions>` in earlier versions, and `<environment_context>` ...
  `</environment_context>`.
Cline's and Roo's custom instructions (`USER'S CUSTOM INSTRUCTIONS`) are in the system
prompt, which the proxy never compacts; aider's conventions file goes as a read-only file,
which `app.core.proxy.live` keeps as sent.

A compaction that summarizes such a span puts it, verbatim, at the start of the summary
turn (`carried`): the summary may paraphrase a rule, the model must read the rule itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from app.core.proxy.splice import JsonDict

# (opens, closes, what the span must hold to be one), each as the agent writes it.
_SPANS = (
    ("<system-reminder>", "</system-reminder>", "Codebase and user instructions are shown below."),
    ("# AGENTS.md instructions for ", "</INSTRUCTIONS>", ""),
    ("<user_instructions>", "</user_instructions>", ""),
    ("<environment_context>", "</environment_context>", ""),
)
_TEXT_BLOCKS = frozenset({"text", "input_text"})


def _texts(message: Mapping[str, Any]) -> Iterator[str]:
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if (
                isinstance(block, Mapping)
                and block.get("type") in _TEXT_BLOCKS
                and isinstance(block.get("text"), str)
            ):
                yield block["text"]


def _spans(text: str) -> Iterator[str]:
    for opens, closes, holds in _SPANS:
        start = text.find(opens)
        while start >= 0:
            end = text.find(closes, start)
            if end < 0:
                break
            end += len(closes)
            if holds in text[start:end]:  # a whole text of its own: as it is, spaces too
                yield text if text.strip() == text[start:end] else text[start:end]
            start = text.find(opens, end)


def standing(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The standing instructions in the user messages of `messages`, each once, in order."""
    found: list[str] = []
    for message in messages:
        if message.get("role") != "user":
            continue
        for text in _texts(message):
            found += [span for span in _spans(text) if span not in found]
    return found


def standing_tokens(message: Mapping[str, Any], tokens: int) -> int:
    """How many of `message`'s `tokens` are standing instructions, by their share of its
    text (0 unless a user's)."""
    if message.get("role") != "user":
        return 0
    texts = list(_texts(message))
    total = sum(len(text) for text in texts)
    spans = sum(len(span) for text in texts for span in _spans(text))
    return tokens * spans // total if total else 0


def carried(
    spans: Sequence[str], kept: Sequence[JsonDict], produced: Sequence[JsonDict]
) -> list[JsonDict]:
    """`produced` (a compaction's new turns, after the `kept` messages) with each of
    `spans` that neither holds put, verbatim, at the start of its first user turn (one
    put ahead when it has none)."""
    present = "\n".join(text for message in [*kept, *produced] for text in _texts(message))
    missing = [span for span in spans if span not in present]
    if not missing:
        return list(produced)
    out = list(produced)
    first = next((i for i, m in enumerate(out) if m.get("role") == "user"), None)
    if first is None:
        return [{"role": "user", "content": [_block(s, "text") for s in missing]}, *out]
    content = out[first].get("content")
    blocks: list[Any] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    )
    kind = next(
        (b["type"] for b in blocks if isinstance(b, Mapping) and b.get("type") in _TEXT_BLOCKS),
        "text",
    )
    out[first] = {**out[first], "content": [*(_block(s, kind) for s in missing), *blocks]}
    return out


def _block(text: str, kind: str) -> JsonDict:
    return {"type": kind, "text": text}
