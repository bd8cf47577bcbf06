"""The providers' rules for a request they accept, checked strictly on a request body as
it would go on the wire: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses.

Written from the providers' documented rules and the 400s they answer, not from our
pipeline (`app/core/provider/rules.py` is the pipeline's own, narrower check): a request handed
back must pass these whatever produced it. Rules that compare with what the agent sent
(`sent`: the body before compaction) check that nothing the provider needs was lost:

    roles              Anthropic `messages`: user and assistant only; Chat: system, developer,
                       user, assistant, tool; Responses: messages of those roles or typed items
    first_user         Anthropic: the first message is a user message
    alternation        Anthropic: user and assistant alternate
    empty              Anthropic: no empty message content, no empty text block; Chat: an
                       assistant message has content or tool calls
    results_first      Anthropic: in a user message, tool_result blocks come before the rest
    call_unanswered    every tool call answered right after it (Anthropic: the next message;
                       Chat: the tool messages right after; Responses: an output item later)
    result_orphaned    every tool result answers a call just before it (Responses: earlier)
    reasoning_alone    Responses: a reasoning item is followed by the item it produced
    thinking_changed   a thinking block or reasoning item handed back is one sent, unchanged
    thinking_dropped   the thinking blocks (Responses: the reasoning items) of the pending
                       tool turn come back whole, first in their turn, with their signatures
    cache_breakpoints  Anthropic: at most 4 `cache_control` (tools, system, messages, top level)
    media_dropped      a kept turn (one of its texts is handed back) keeps its images and
                       documents
    newest_request     the last user turn sent (its text, images, documents) is handed back
                       whole, last
    ends_on_assistant  the request does not end with an assistant turn (a prefill)
    fields_changed     every field but the messages comes back as sent, in the order sent
    over_window        input tokens + the output budget (`max_tokens`, ...) <= the window
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tests.sdk_bodies import Api

Json = dict[str, Any]
MEDIA = frozenset(
    {"image", "document", "image_url", "input_audio", "file", "input_image", "input_file"}
)
OUTPUT_BUDGET = ("max_tokens", "max_completion_tokens", "max_output_tokens")
ASSISTANT_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call"})
MAX_BREAKPOINTS = 4


@dataclass(frozen=True)
class Broken:
    rule: str
    where: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.rule} at {self.where}: {self.detail}"


def check(
    body: Json,
    api: Api,
    *,
    sent: Json | None = None,
    window: int | None = None,
    count: Callable[[Json], int] | None = None,
) -> list[Broken]:
    """Every rule `body` breaks as a request to `api`; `sent`, the body the agent sent,
    for the rules that compare; `window` and `count` (input tokens of a body), for the
    budget."""
    key = "input" if api == "responses" else "messages"
    items = body.get(key)
    if not isinstance(items, list):
        return [Broken("roles", key, "not a list")]
    rules = {"anthropic": _anthropic, "chat": _chat, "responses": _responses}[api]
    found = list(rules(body, items, key))
    if sent is not None:
        found += _compared(body, items, sent, api, key)
    if window is not None and count is not None:
        budget = next((body[k] for k in OUTPUT_BUDGET if isinstance(body.get(k), int)), 0)
        tokens = count(body)
        if tokens + budget > window:
            found.append(Broken("over_window", key, f"{tokens} + {budget} > {window}"))
    return found


def _parts(content: Any) -> list[Json]:
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def _empty(content: Any, where: str) -> Iterator[Broken]:
    if content in ("", []):
        yield Broken("empty", where, "empty content")
    for j, part in enumerate(_parts(content)):
        if part.get("type") in ("text", "input_text", "output_text") and not part.get("text"):
            yield Broken("empty", f"{where}.content[{j}]", "empty text")


def _anthropic(body: Json, messages: list[Any], key: str) -> Iterator[Broken]:
    breakpoints = sum(1 for _ in _cache_controls(body.get("tools")))
    breakpoints += sum(1 for _ in _cache_controls(body.get("system")))
    breakpoints += 1 if isinstance(body.get("cache_control"), dict) else 0
    previous: Json | None = None
    for i, message in enumerate(messages):
        where = f"{key}[{i}]"
        role, content = message.get("role"), message.get("content")
        breakpoints += sum(1 for _ in _cache_controls(content))
        if role not in ("user", "assistant"):
            yield Broken("roles", where, f"role {role!r}")
        if i == 0 and role != "user":
            yield Broken("first_user", where, f"starts with {role!r}")
        if previous is not None and previous.get("role") == role:
            yield Broken("alternation", where, f"two {role} messages in a row")
        yield from _empty(content, where)
        blocks = _parts(content)
        kinds = [b.get("type") for b in blocks]
        last_result = max((j for j, k in enumerate(kinds) if k == "tool_result"), default=0)
        if any(k != "tool_result" for k in kinds[:last_result]):
            yield Broken("results_first", where, "a block before a tool_result")
        asked = {b.get("id") for b in _parts(previous.get("content"))} if previous else set()
        for b in blocks:
            if b.get("type") == "tool_result" and b.get("tool_use_id") not in asked:
                yield Broken("result_orphaned", where, f"tool_result {b.get('tool_use_id')}")
        following = messages[i + 1] if i + 1 < len(messages) else {}
        answered = {b.get("tool_use_id") for b in _parts(following.get("content"))}
        for b in blocks:
            if b.get("type") == "tool_use" and b.get("id") not in answered:
                yield Broken("call_unanswered", where, f"tool_use {b.get('id')}")
        previous = message
    if breakpoints > MAX_BREAKPOINTS:
        yield Broken("cache_breakpoints", key, f"{breakpoints} cache_control")
    if messages and messages[-1].get("role") == "assistant":
        yield Broken("ends_on_assistant", f"{key}[{len(messages) - 1}]")


def _cache_controls(value: Any) -> Iterator[None]:
    if isinstance(value, dict):
        if isinstance(value.get("cache_control"), dict):
            yield None
        yield from _cache_controls(value.get("content"))
    elif isinstance(value, list):
        for item in value:
            yield from _cache_controls(item)


def _chat(body: Json, messages: list[Any], key: str) -> Iterator[Broken]:
    for i, message in enumerate(messages):
        where = f"{key}[{i}]"
        role = message.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            yield Broken("roles", where, f"role {role!r}")
        calls = message.get("tool_calls") or []
        if role == "assistant" and message.get("content") in (None, "", []) and not calls:
            yield Broken("empty", where, "an assistant message with neither content nor calls")
        if calls:
            j, answered = i + 1, set()
            while j < len(messages) and messages[j].get("role") == "tool":
                answered.add(messages[j].get("tool_call_id"))
                j += 1
            for call in calls:
                if call.get("id") not in answered:
                    yield Broken("call_unanswered", where, f"tool call {call.get('id')}")
        if role == "tool":
            j = i - 1
            while j >= 0 and messages[j].get("role") == "tool":
                j -= 1
            asked = {c.get("id") for c in messages[j].get("tool_calls") or []} if j >= 0 else set()
            if message.get("tool_call_id") not in asked:
                yield Broken(
                    "result_orphaned", where, f"tool message {message.get('tool_call_id')}"
                )
    if messages and messages[-1].get("role") == "assistant":
        yield Broken("ends_on_assistant", f"{key}[{len(messages) - 1}]")


def _item_type(item: Json) -> str:
    return str(item.get("type") or ("message" if "role" in item else "item_reference"))


def _responses(body: Json, items: list[Any], key: str) -> Iterator[Broken]:
    calls: dict[Any, int] = {}
    outputs: dict[Any, int] = {}
    for i, item in enumerate(items):
        where = f"{key}[{i}]"
        kind = _item_type(item)
        if kind == "message":
            if item.get("role") not in ("user", "assistant", "system", "developer"):
                yield Broken("roles", where, f"role {item.get('role')!r}")
        elif kind.endswith("_call_output"):
            if item.get("call_id") not in calls:
                yield Broken("result_orphaned", where, f"output {item.get('call_id')}")
            outputs[item.get("call_id")] = i
        elif kind.endswith("_call") and "call_id" in item:
            calls[item.get("call_id")] = i
        elif kind == "reasoning":
            following = items[i + 1] if i + 1 < len(items) else {}
            if not _assistant_side(following):
                yield Broken("reasoning_alone", where, "not followed by the item it produced")
    for call, at in calls.items():
        if call not in outputs:
            yield Broken("call_unanswered", f"{key}[{at}]", f"call {call}")
    if items and _item_type(items[-1]) == "message" and items[-1].get("role") == "assistant":
        yield Broken("ends_on_assistant", f"{key}[{len(items) - 1}]")


def _assistant_side(item: Json) -> bool:
    kind = _item_type(item) if item else ""
    if kind == "message":
        return item.get("role") == "assistant"
    return kind in ASSISTANT_ITEMS or (kind.endswith("_call") and bool(item))


def _compared(body: Json, items: list[Any], sent: Json, api: Api, key: str) -> Iterator[Broken]:
    sent_items = sent.get(key) or []
    fields = [k for k in body if k != key]
    sent_fields = [k for k in sent if k != key]
    if fields != sent_fields or any(body[k] != sent[k] for k in fields):
        changed = [k for k in {*fields, *sent_fields} if body.get(k) != sent.get(k)]
        yield Broken("fields_changed", "body", f"order {fields} vs {sent_fields}; {changed}")
    yield from _thinking(items, sent_items, api, key)
    handed = {_key(p) for p in _all_parts(items)}
    for i, message in enumerate(sent_items):
        parts = _parts(message.get("content"))
        texts = [p for p in parts if p.get("type") in ("text", "input_text") and p.get("text")]
        media = [p for p in parts if p.get("type") in MEDIA]
        if media and any(_key(t) in handed for t in texts):
            lost = [p.get("type") for p in media if _key(p) not in handed]
            if lost:
                yield Broken("media_dropped", f"{key}[{i}]", f"{lost} of a kept turn")
    yield from _newest(items, sent_items, key)


def _key(part: Json) -> str:
    return json.dumps(part, sort_keys=True)


def _all_parts(items: Sequence[Any]) -> Iterator[Json]:
    for item in items:
        for part in _parts(item.get("content")):
            yield part
            yield from _parts(part.get("content"))


def _own_parts(message: Json) -> list[Json]:
    return [p for p in _parts(message.get("content")) if p.get("type") != "tool_result"]


def _is_user_turn(message: Json) -> bool:
    return message.get("role") == "user" and _item_type(message) == "message"


def _newest(items: list[Any], sent_items: list[Any], key: str) -> Iterator[Broken]:
    last = sent_items[-1] if sent_items else {}
    if not _is_user_turn(last):
        return
    own = last.get("content") if isinstance(last.get("content"), str) else _own_parts(last)
    if not own:
        return
    ending = items[-1] if items else {}
    if not _is_user_turn(ending):
        yield Broken(
            "newest_request", f"{key}[{len(items) - 1}]", "the request does not end with it"
        )
        return
    if isinstance(own, str):
        ok = ending.get("content") == own or any(
            p.get("text") == own for p in _parts(ending.get("content"))
        )
    else:
        handed = {_key(p) for p in _own_parts(ending)}
        ok = all(_key(p) in handed for p in own)
    if not ok:
        yield Broken("newest_request", f"{key}[{len(items) - 1}]", "not handed back whole")


def _thinking(items: list[Any], sent_items: list[Any], api: Api, key: str) -> Iterator[Broken]:
    """Thinking (Anthropic) and reasoning items (Responses) sent back unchanged; those of
    the pending tool turn all there, first in their turn."""
    if api == "chat":
        return
    sent_thoughts = {_key(t) for t in _thoughts(sent_items, api)}
    for i, thought in enumerate(_thoughts(items, api)):
        if _key(thought) not in sent_thoughts:
            yield Broken("thinking_changed", key, f"thought {i} was not sent as it is")
    calls, thoughts = _pending_turn(sent_items, api)
    if calls and _pending_turn(items, api) not in ((calls, thoughts), ((), [])):
        yield Broken("thinking_dropped", key, "the pending tool turn's thinking is not whole")


_THINKING = ("thinking", "redacted_thinking")


def _thoughts(items: Sequence[Any], api: Api) -> Iterator[Json]:
    for item in items:
        if api == "responses":
            if _item_type(item) == "reasoning":
                yield item
        elif item.get("role") == "assistant":
            yield from (b for b in _parts(item.get("content")) if b.get("type") in _THINKING)


def _pending_turn(items: Sequence[Any], api: Api) -> tuple[tuple[Any, ...], list[str]]:
    """The calls the last results answer and the thinking of their turn (JSON each, in
    order); ((), []) when the list does not end with tool results."""
    at = len(items) - 1
    if api == "responses":
        calls = []
        while at >= 0 and _item_type(items[at]).endswith("_call_output"):
            calls.append(items[at].get("call_id"))
            at -= 1
        thoughts = []
        while at >= 0 and calls and _assistant_side(items[at]):
            if _item_type(items[at]) == "reasoning":
                thoughts.append(_key(items[at]))
            at -= 1
        return tuple(sorted(map(str, calls))), thoughts[::-1]
    results = [p for p in _parts(items[at].get("content")) if p.get("type") == "tool_result"]
    if at < 1 or not results:
        return (), []
    lead = []
    for block in _parts(items[at - 1].get("content")):
        if block.get("type") not in _THINKING:
            break
        lead.append(_key(block))
    return tuple(sorted(str(r.get("tool_use_id")) for r in results)), lead
