"""The context an agent sends, layer by layer, in one fixed order.

    L1  system prompt + tool descriptions      one system message (a stable prefix)
    L2  project rules (CODE_LAW.md)            one system message, only when there are rules
    L3  history (summaries included)           the messages as the agent keeps them
    4   the current user input                 a user message
    5   the todo recap                         appended to that same user message

L2 is a system message right after L1 rather than text inside it, so L1 stays a
byte-identical prefix (prompt caches) whether or not the rules change; both are leading
system messages, which every provider accepts. The current input and the recap share one
user message (text joined by a blank line) so roles still alternate; when the history
already ends with a user message (tool results), they are appended to it: a text block
after its blocks, or text after its string.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from app.core.messages import Message, TextBlock, text_message

RULES_FILE = "CODE_LAW.md"
RULES_PREFIX = "[Project rules] "
TEXT_SEPARATOR = "\n\n"

Layer = Literal["L1", "L2", "L3", "input", "L3+input"]


@dataclass(frozen=True)
class ContextLayers:
    """What goes into one model call, by layer; any part may be empty."""

    system: str = ""
    tools: str = ""
    rules: str = ""
    rules_path: str = RULES_FILE
    history: Sequence[Message] = ()
    current_input: str = ""
    todo_recap: str = ""


def pick_rules_file(names: Iterable[str]) -> str | None:
    """`CODE_LAW.md` in any case: the exact name first, then `code_law.md`, then the
    first other spelling in sorted order (a case-sensitive file system may hold several)."""
    matches = sorted(name for name in names if name.casefold() == RULES_FILE.casefold())
    for preferred in (RULES_FILE, RULES_FILE.lower()):
        if preferred in matches:
            return preferred
    return matches[0] if matches else None


def rules_message(path: str, rules: str) -> Message:
    return text_message("system", f"{RULES_PREFIX}{path}:\n{rules}")


def _join(*parts: str) -> str:
    return TEXT_SEPARATOR.join(part for part in parts if part)


def _appended(message: Message, text: str) -> Message:
    if isinstance(message.content, str):
        content: str | list[object] = _join(message.content, text)
    else:
        content = [*message.content, TextBlock(type="text", text=text)]
    return message.model_copy(update={"content": content})


def assemble_layers(layers: ContextLayers) -> tuple[list[Message], list[Layer]]:
    """The messages in layer order, and the layer of each one."""
    messages: list[Message] = []
    labels: list[Layer] = []
    l1 = _join(layers.system, layers.tools)
    if l1:
        messages.append(text_message("system", l1))
        labels.append("L1")
    if layers.rules.strip():
        messages.append(rules_message(layers.rules_path, layers.rules))
        labels.append("L2")
    messages.extend(layers.history)
    labels.extend("L3" for _ in layers.history)
    turn = _join(layers.current_input, layers.todo_recap)
    if not turn:
        return messages, labels
    if layers.history and layers.history[-1].role == "user":
        messages[-1] = _appended(messages[-1], turn)
        labels[-1] = "L3+input"
    else:
        messages.append(text_message("user", turn))
        labels.append("input")
    return messages, labels
