"""An LLM's answer without what is not part of it: reasoning blocks and chat-template tokens.

Thinking models write their reasoning into the answer (`<think>…</think>`, `<thinking>`,
`<reasoning>`, `<reflection>`), and a server with a wrong chat template leaks its control
tokens (`<|im_start|>assistant`, `<|eot_id|>`, `[INST]`, `<s>`). Neither may reach the
stored summary, and neither may hide what the rest of the answer is, so both go before
anything is judged. The cleaned text is what the summary becomes when it is accepted.

Rules:
- A reasoning tag counts only where a model writes one: at the start of a line. A tag
  quoted inside a sentence or code span (``the model's `<think>` block``) is text.
- A complete block is removed; a closing tag without an opening one (templates that open
  the block in the prompt) removes everything before it.
- A block that is opened and never closed makes the whole answer reasoning: the model
  stopped before its final answer (`reasoning_only`), whatever came before it.
- Template tokens, and the role name that follows a turn-opening token, are removed; a
  turn-closing token ends the answer when something came before it (what follows is a
  turn the model invented).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAGS = r"think|thinking|thought|reasoning|reflection|scratchpad"
_OPEN = re.compile(rf"^[ \t]*<({_TAGS})>", re.IGNORECASE | re.MULTILINE)
# A closing tag on a line of its own, or ending one (never one quoted mid-sentence).
_CLOSE = re.compile(rf"^[ \t]*</({_TAGS})>|</({_TAGS})>[ \t]*$", re.IGNORECASE | re.MULTILINE)
_ROLE = r"(?:[ \t]*(?:system|user|assistant|model|tool|developer|ipython)\b)?"
# Tokens that open a turn (with the role after them) or are markup only.
_OPENERS = re.compile(
    rf"(?:<\|im_start\|>|<\|start_header_id\|>|<start_of_turn>|<\|(?:user|assistant|system)\|>)"
    rf"{_ROLE}(?:<\|end_header_id\|>)?"
    r"|<\|begin_of_text\|>|<\|endoftext\|>|\A\s*<s>|<s>(?=\s*\[INST\])|\[/?INST\]|<</?SYS>>"
    r"|<\|channel\|>\w*"
    r"|<\|message\|>|<\|start\|>\w*|<\|[a-z_]{1,30}\|>",
    re.IGNORECASE,
)
# Tokens that close a turn. `<s>` and `</s>` are also HTML (strikethrough): they count only
# where a template puts them (the start, the end, around `[INST]`).
_CLOSERS = re.compile(
    r"<\|im_end\|>|<\|eot_id\|>|<end_of_turn>|</s>(?=\s*(?:\Z|<s>|\[INST\]))|<\|end\|>"
    r"|<\|return\|>|<\|endoftext\|>"
)


@dataclass(frozen=True)
class CleanAnswer:
    """The answer's own text; `reasoning_only` when it never got past its reasoning."""

    text: str
    reasoning_only: bool = False


def clean_answer(text: str) -> CleanAnswer:
    """`text` without template tokens and reasoning blocks (see the module's rules)."""
    text = _without_template(text)
    had_reasoning = bool(_OPEN.search(text) or _CLOSE.search(text))
    rest = _without_reasoning(text)
    if rest is None:
        return CleanAnswer("", reasoning_only=True)
    rest = rest.strip()
    return CleanAnswer(rest, reasoning_only=had_reasoning and not rest)


def _without_template(text: str) -> str:
    for closer in _CLOSERS.finditer(text):
        before = text[: closer.start()]
        if _OPENERS.sub("", before).strip():
            text = before
            break
    return _OPENERS.sub("", _CLOSERS.sub("", text))


def _without_reasoning(text: str) -> str | None:
    """The text outside reasoning blocks; None when a block is never closed."""
    parts: list[str] = []
    position = 0
    while True:
        opened = _OPEN.search(text, position)
        closed = _CLOSE.search(text, position)
        if closed is not None and (opened is None or closed.start() < opened.start()):
            position = closed.end()  # reasoning opened by the template: drop what came before
            parts.clear()
            continue
        if opened is None:
            parts.append(text[position:])
            return "".join(parts)
        parts.append(text[position : opened.start()])
        end = re.compile(rf"</{re.escape(opened.group(1))}>", re.IGNORECASE)
        found = end.search(text, opened.end())
        if found is None:
            return None
        position = found.end()
