"""An LLM's answer without what is not part of it: reasoning blocks and chat-template tokens.

Thinking models write their reasoning into the answer (`<think>…</think>`, `<thinking>`,
`<reasoning>`, `<analysis>`, `<|begin_of_thought|>`, `[THINK]`, Harmony's analysis
channel), and a server with a wrong chat template leaks its control tokens
(`<|im_start|>assistant`, `<|eot_id|>`, `[INST]`, `<s>`, `<start_of_turn>`, `<｜Assistant｜>`).
Neither may reach the stored summary, and neither may hide what the rest of the answer
is, so both go before anything is judged. The cleaned text is what the summary becomes
when it is accepted.

Rules:
- A reasoning tag counts only where a model writes one: at the start of a line. A tag
  quoted inside a sentence or code span (``the model's `<think>` block``) is text.
- A complete block is removed; a closing tag without an opening one (templates that open
  the block in the prompt) removes everything before it.
- A block that is opened and never closed makes the whole answer reasoning: the model
  stopped before its final answer (`reasoning_only`), whatever came before it.
- Template tokens, and the role name that follows a turn-opening token, are removed; a
  turn-closing token ends the answer when something came before it (what follows is a
  turn the model invented); the end of a repeated user turn (`[/INST]`) starts it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAGS = r"think|thinking|thought|reasoning|reflection|scratchpad|analysis|seed:think"
_OPEN = re.compile(rf"^[ \t]*<({_TAGS})(?:\s[^>\n]*)?>", re.IGNORECASE | re.MULTILINE)
# Other spellings of a reasoning block, read as `<think>` / `</think>` on lines of their own:
# special tokens (`<|begin_of_thought|>`, Magistral's `[THINK]`) and Harmony's analysis
# channel, which ends at `<|end|>` or at the next message's `<|start|>`.
_OTHER_OPEN = re.compile(
    r"<\|begin_of_(?:thought|reasoning)\|>|^[ \t]*\[THINK\]", re.IGNORECASE | re.MULTILINE
)
_OTHER_CLOSE = re.compile(
    r"<\|end_of_(?:thought|reasoning)\|>|^[ \t]*\[/THINK\]|\[/THINK\][ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_HARMONY = re.compile(
    r"(?:<\|start\|>\w*)?<\|channel\|>\s*(?:analysis|commentary)\b[^<]*<\|message\|>"
    r"(.*?)(?:(<\|end\|>|(?=<\|start\|>))|\Z)",
    re.IGNORECASE | re.DOTALL,
)
# A closing tag on a line of its own, or ending one (never one quoted mid-sentence).
_CLOSE = re.compile(rf"^[ \t]*</({_TAGS})>|</({_TAGS})>[ \t]*$", re.IGNORECASE | re.MULTILINE)
_ROLE = r"(?:[ \t]*(?:system|user|assistant|model|tool|developer|ipython)\b)?"
# Tokens that open a turn (with the role after them) or are markup only.
_OPENERS = re.compile(
    rf"(?:<\|im_start\|>|<\|start_header_id\|>|<start_of_turn>|<\|(?:user|assistant|system)\|>)"
    rf"{_ROLE}(?:<\|end_header_id\|>)?"
    r"|<\|begin_of_text\|>|<\|endoftext\|>|\A\s*<s>|<s>(?=\s*\[INST\])|\[/?INST\]|<</?SYS>>"
    r"|<\|channel\|>\w*"
    r"|<\|message\|>|<\|start\|>\w*|<\|[a-z_]{1,30}\|>"
    r"|<｜[^｜\n]{1,40}｜>",  # DeepSeek's full-width bars
    re.IGNORECASE,
)
# Tokens that close a turn. `<s>` and `</s>` are also HTML (strikethrough): they count only
# where a template puts them (the start, the end, around `[INST]`).
_CLOSERS = re.compile(
    r"<\|im_end\|>|<\|eot_id\|>|<end_of_turn>|</s>(?=\s*(?:\Z|<s>|\[INST\]))|<\|end\|>"
    r"|<\|return\|>|<\|endoftext\|>|<｜end▁of▁sentence｜>"
)
# The end of a user turn the answer repeats (`[INST] … [/INST]`): the answer follows it.
_USER_TURN_END = re.compile(r"\[/INST\]", re.IGNORECASE)


@dataclass(frozen=True)
class CleanAnswer:
    """The answer's own text; `reasoning_only` when it never got past its reasoning."""

    text: str
    reasoning_only: bool = False


def clean_answer(text: str) -> CleanAnswer:
    """`text` without template tokens and reasoning blocks (see the module's rules)."""
    text = _as_think_tags(text)
    text = _without_template(text)
    had_reasoning = bool(_OPEN.search(text) or _CLOSE.search(text))
    rest = _without_reasoning(text)
    if rest is None:
        return CleanAnswer("", reasoning_only=True)
    rest = rest.strip()
    return CleanAnswer(rest, reasoning_only=had_reasoning and not rest)


def _as_think_tags(text: str) -> str:
    """Other spellings of a reasoning block as `<think>` lines (an unclosed one stays open)."""

    def harmony(found: re.Match[str]) -> str:
        closing = "" if found.group(2) is None else "\n</think>\n"
        return f"\n<think>\n{found.group(1)}{closing}"

    text = _HARMONY.sub(harmony, text)
    text = _OTHER_OPEN.sub("\n<think>\n", text)
    return _OTHER_CLOSE.sub("\n</think>\n", text)


def _without_template(text: str) -> str:
    turns = _USER_TURN_END.split(text)
    if len(turns) > 1 and _CLOSERS.sub("", _OPENERS.sub("", turns[-1])).strip():
        text = turns[-1]
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
