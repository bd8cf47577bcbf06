"""The providers' rules for a conversation they will accept, stated once.

Anthropic (Messages API; the leading system messages become its `system` parameter):
    system_not_leading     system messages only at the start
    first_message_user     after the system prompt the first message is a user message
    roles_alternate        user and assistant alternate
    tool_use_unanswered    every tool_use is answered by a tool_result in the next message,
                           which is a user message
    tool_result_orphaned   every tool_result answers a tool_use of the message just before

OpenAI (Chat Completions, checked on its own JSON so indexes are the caller's):
    tool_call_unanswered   every tool_calls id is answered by a tool message in the run of
                           tool messages right after it
    tool_message_orphaned  every tool message answers a tool_calls id of the assistant
                           message before its run

Each violation names its rule and the index of the offending message in the list as
sent (what a 422 names), and the canonical message that holds it (what a strategy compares
with its plan): the same index, but in an OpenAI list, whose runs of tool messages are one
canonical message each.

With `pending_tail_ok`, tool calls of the last assistant message that are not answered yet
(nothing follows them but their own partial answers) are not violations: an agent may ask
us between the model's tool call and its execution, and the agent will answer them before
its next request. Compacted output is always checked without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.core.messages import Message, ToolResultBlock, tool_uses
from app.core.provider.dialects import OpenAIForms
from app.core.vocabulary import Format


@dataclass(frozen=True)
class Violation:
    rule: str
    index: int
    detail: str
    # The canonical message holding it, where that is not the one at `index` (an item of an
    # OpenAI list: its tool runs are merged).
    message: int | None = None

    @property
    def canonical(self) -> int:
        """The index, in the canonical list, of the message that holds the violation."""
        return self.index if self.message is None else self.message

    def __str__(self) -> str:
        return f"{self.rule}: {self.detail}"


def _results(message: Message) -> list[ToolResultBlock]:
    if message.role != "user" or isinstance(message.content, str):
        return []
    return [b for b in message.content if isinstance(b, ToolResultBlock)]


def anthropic_violations(
    messages: Sequence[Message], *, pending_tail_ok: bool = False
) -> list[Violation]:
    found: list[Violation] = []
    start = 0
    while start < len(messages) and messages[start].role == "system":
        start += 1
    previous: Message | None = None
    for i in range(start, len(messages)):
        message = messages[i]
        if message.role == "system":
            found.append(Violation("system_not_leading", i, "a system message after the start"))
            continue
        if previous is None and message.role != "user":
            found.append(Violation("first_message_user", i, "the first message must be user"))
        elif previous is not None and previous.role == message.role:
            found.append(Violation("roles_alternate", i, f"two {message.role} messages in a row"))
        asked = {c.id for c in tool_uses(previous)} if previous is not None else set()
        for block in _results(message):
            if block.tool_use_id not in asked:
                detail = f"tool_result {block.tool_use_id} answers no tool_use just before it"
                found.append(Violation("tool_result_orphaned", i, detail))
        answered = (
            {b.tool_use_id for b in _results(messages[i + 1])} if i + 1 < len(messages) else set()
        )
        pending = pending_tail_ok and i == len(messages) - 1
        for call in tool_uses(message):
            if call.id not in answered and not pending:
                detail = f"tool_use {call.id} has no tool_result in the next message"
                found.append(Violation("tool_use_unanswered", i, detail))
        previous = message
    return found


def openai_violations(
    raw: Sequence[dict[str, Any]], *, pending_tail_ok: bool = False
) -> list[Violation]:
    found: list[Violation] = []
    for i, message in enumerate(raw):
        if message.get("role") == "assistant":
            answered = set()
            j = i + 1
            while j < len(raw) and raw[j].get("role") == "tool":
                answered.add(raw[j].get("tool_call_id"))
                j += 1
            pending = pending_tail_ok and j == len(raw)
            for call in message.get("tool_calls") or ():
                if call.get("id") not in answered and not pending:
                    detail = f"tool call {call.get('id')} is not answered by a tool message"
                    found.append(Violation("tool_call_unanswered", i, detail))
        elif message.get("role") == "tool":
            j = i - 1
            while j >= 0 and raw[j].get("role") == "tool":
                j -= 1
            asked = (
                {c.get("id") for c in raw[j].get("tool_calls") or ()}
                if j >= 0 and raw[j].get("role") == "assistant"
                else set()
            )
            if message.get("tool_call_id") not in asked:
                detail = f"tool message {message.get('tool_call_id')} answers no tool call"
                found.append(Violation("tool_message_orphaned", i, detail))
    return found


def violations(
    messages: Sequence[Message],
    fmt: Format,
    *,
    pending_tail_ok: bool = False,
    forms: OpenAIForms | None = None,
) -> list[Violation]:
    """The rules of the provider whose format the messages came in, broken where. OpenAI
    messages are checked in their OpenAI form: the request's `forms` when given."""
    if fmt == "openai":
        forms = OpenAIForms() if forms is None else forms
        found = openai_violations(forms.dump(messages), pending_tail_ok=pending_tail_ok)
        if not found:
            return found
        holder = [at for at, message in enumerate(messages) for _ in forms.of(message)]
        return [replace(v, message=holder[v.index]) for v in found]
    return anthropic_violations(messages, pending_tail_ok=pending_tail_ok)
