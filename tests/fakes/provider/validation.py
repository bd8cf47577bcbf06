"""The request rules the real APIs enforce and their SDKs' types do not, each with the
provider's own message, so a proxy that rewrites a request is caught breaking one.

Anthropic (400 `invalid_request_error`):
- a `tool_use` must be answered by a `tool_result` in the next message
  (anthropics/claude-code#1237), and a `tool_result` must answer a `tool_use` of the
  previous message (anthropics/claude-code#13460);
- text blocks must be non-empty and not only whitespace (anthropics/claude-code#53473,
  #23440), and every message but a final assistant one must have content;
- at most 4 blocks carry `cache_control` (tghamm/Anthropic.SDK#50), and one of an hour
  (`ttl: "1h"`) never comes after one of five minutes, in the order tools, system,
  messages (cnighswonger/claude-code-cache-fix#44);
- roles are `user` and `assistant` (the system prompt is the top-level `system`).
OpenAI chat (400, param `messages.[i].role`): an assistant's `tool_calls` must each be
answered by a `tool` message (BerriAI/litellm#10083), and a `tool` message must follow one.

Each rule returns the first message it finds, or None.
"""

from __future__ import annotations

from typing import Any

MAX_BREAKPOINTS = 4


def anthropic_problem(body: Any, *, needs_max_tokens: bool, rules: bool = True) -> str | None:
    """The first problem of a Messages request; with `rules` off, only a missing field."""
    if not isinstance(body, dict):
        return "There was an issue with the format or content of your request."
    for name in ("model", "messages") + (("max_tokens",) if needs_max_tokens else ()):
        if name not in body:
            return f"{name}: Field required"
    messages = body["messages"]
    if not isinstance(messages, list):
        return "messages: Input should be a valid list"
    if not rules:
        return None
    for check in (_roles, _contents, _tool_pairs):
        problem = check(messages)
        if problem:
            return problem
    found = _count_breakpoints(body)
    if found > MAX_BREAKPOINTS:
        limit = MAX_BREAKPOINTS
        return f"A maximum of {limit} blocks with cache_control may be provided. Found {found}."
    return _ttl_order(body)


def _ttl_order(body: dict[str, Any]) -> str | None:
    system = body.get("system")
    places = [(f"tools.{i}", t) for i, t in enumerate(body.get("tools") or [])]
    places += [(f"system.{i}", b) for i, b in enumerate(_blocks(system))]
    for i, message in enumerate(body["messages"]):
        content = _blocks(message.get("content"))
        places += [(f"messages.{i}.content.{j}", b) for j, b in enumerate(content)]
    short = False
    for where, block in places:
        mark = block.get("cache_control") if isinstance(block, dict) else None
        if not isinstance(mark, dict):
            continue
        if mark.get("ttl", "5m") == "5m":
            short = True
        elif mark.get("ttl") == "1h" and short:
            return (
                f"{where}.cache_control.ttl: a ttl='1h' cache_control block must not come "
                "after a ttl='5m' cache_control block. Note that blocks are processed in the "
                "following order: `tools`, `system`, `messages`."
            )
    return None


def _roles(messages: list[Any]) -> str | None:
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "system":
            return (
                'messages: Unexpected role "system". The Messages API accepts a top-level '
                '`system` parameter, not "system" as an input message role.'
            )
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    return None


def _contents(messages: list[Any]) -> str | None:
    for i, message in enumerate(messages):
        content = message.get("content")
        final_assistant = i == len(messages) - 1 and message.get("role") == "assistant"
        if not content and not final_assistant:
            return (
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        for block in _blocks(content):
            if block.get("type") == "text":
                text = block.get("text")
                if not text:
                    return "messages: text content blocks must be non-empty"
                if isinstance(text, str) and not text.strip():
                    return "messages: text content blocks must contain non-whitespace text"
    return None


def _tool_pairs(messages: list[Any]) -> str | None:
    for i, message in enumerate(messages):
        previous = _ids(messages[i - 1], "tool_use", "id") if i else set()
        for j, block in enumerate(_blocks(message.get("content"))):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in previous:
                return (
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
        if i + 1 < len(messages):
            used = [b["id"] for b in _blocks(message.get("content")) if b.get("type") == "tool_use"]
            answered = _ids(messages[i + 1], "tool_result", "tool_use_id")
            missing = [tool_id for tool_id in used if tool_id not in answered]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                    "a corresponding `tool_result` block in the next message."
                )
    return None


def _count_breakpoints(body: dict[str, Any]) -> int:
    found = sum(1 for tool in body.get("tools") or [] if "cache_control" in tool)
    system = body.get("system")
    found += (
        sum(1 for block in system if "cache_control" in block) if isinstance(system, list) else 0
    )
    for message in body["messages"]:
        found += sum(1 for block in _blocks(message.get("content")) if "cache_control" in block)
    return found


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _ids(message: Any, kind: str, key: str) -> set[str]:
    content = message.get("content") if isinstance(message, dict) else None
    return {str(b.get(key)) for b in _blocks(content) if b.get("type") == kind}


def openai_chat_problem(body: Any, *, rules: bool = True) -> tuple[str, str] | None:
    """(message, param) of the first broken rule; with `rules` off, only a missing field."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return ("Missing required parameter: 'messages'.", "messages")
    if "model" not in body:
        return ("Missing required parameter: 'model'.", "model")
    if not rules:
        return None
    messages = [m for m in body["messages"] if isinstance(m, dict)]
    pending: list[str] = []
    opened = -1
    for i, message in enumerate(messages):
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in pending:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"messages.[{i}].role",
                )
            pending.remove(message["tool_call_id"])
            continue
        if pending:
            return _unanswered(pending, opened)
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        pending = [str(c.get("id")) for c in calls or [] if isinstance(c, dict)]
        opened = i
    return _unanswered(pending, opened) if pending else None


def _unanswered(pending: list[str], index: int) -> tuple[str, str]:
    return (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(pending),
        f"messages.[{index}].role",
    )


def responses_problem(body: Any, *, rules: bool = True) -> tuple[str, str] | None:
    """(message, param) of the first broken rule of a Responses request's `input`, 400
    `invalid_request_error`, param `input`: each call answered by its output later on
    (router-for-me/CLIProxyAPI#2368) and each output answering an earlier call
    (continuedev/continue#10092), and a reasoning item followed by the item it was
    produced with (continuedev/continue#8933)."""
    if not isinstance(body, dict) or "model" not in body:
        return ("Missing required parameter: 'model'.", "model")
    items = body.get("input")
    if not rules or not isinstance(items, list):
        return None
    items = [i for i in items if isinstance(i, dict)]
    calls = {i.get("call_id") for i in items if _is_call(i)}
    answered: set[Any] = set()
    for n, item in enumerate(items):
        kind = str(item.get("type", "message"))
        if kind.endswith("_call_output"):
            if item.get("call_id") not in calls:
                message = (
                    "No tool call found for function call output with call_id "
                    f"{item.get('call_id')}."
                )
                return (message, "input")
            answered.add(item.get("call_id"))
        if kind == "reasoning" and not (n + 1 < len(items) and _follows(items[n + 1])):
            name = item.get("id", f"input[{n}]")
            return (
                f"Item '{name}' of type 'reasoning' was provided without its required "
                "following item.",
                "input",
            )
    for item in items:
        if _is_call(item) and item.get("call_id") not in answered:
            return (f"No tool output found for function call {item.get('call_id')}.", "input")
    return None


def _is_call(item: dict[str, Any]) -> bool:
    return item.get("type") in ("function_call", "custom_tool_call")


def _follows(item: dict[str, Any]) -> bool:
    """An item a model produces after its reasoning: its message, a call."""
    kind = item.get("type", "message")
    if kind == "message":
        return item.get("role") == "assistant"
    return isinstance(kind, str) and kind != "reasoning" and not kind.endswith("_output")
