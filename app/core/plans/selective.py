"""The `selective` strategy's rules, as pure planning over a message list.

Each message after the system prompt is classified:

    system_prompt        role system                                     never compressed
    memory               metadata.kind "memory"                          never compressed
    compaction_summary   a `[Conversation compressed]` user message and   never compressed
                         the acknowledgement after it; metadata.kind "compaction_summary"
    tool_block           an assistant message with tool calls + the user message answering it
    skill_prompt         metadata.kind "skill_prompt"
    skill_metadata       metadata.kind "skill_metadata"
    assistant_message    any other assistant message
    user_message         any other user message

`metadata` is the message's own field (Anthropic shape) or the OpenAI message's `metadata`
field, kept by the dialect. A message with tool calls or tool results is a tool block
whatever its metadata says: its structure decides what can be removed safely.

The rules run in priority order, and before each one the list is counted: once it is under
the target, the remaining rules do not run (`force` runs them all):

    10 tool_blocks        keep the last `keep_recent` tool blocks; drop older ones as units
                          (the call and its results together); in the kept ones, a call's
                          input over `tool_call_threshold` tokens and a result over
                          `tool_result_threshold` are cut to `preview_tokens` (app.core.cut)
    20 skill_prompt       drop all
    30 assistant_message  keep the last `keep_recent`, drop older ones
    40 skill_metadata     drop all
    50 user_message       keep the last `keep_recent` of the messages the harness alone
                          wrote (`app.core.history.harness`: environment details, tool results sent
                          as text), drop older ones (of a message that also carries tool
                          results, only that text: its results stay). What the user said
                          is never dropped: the first request, later requests and standing
                          instructions are the task

Never touched: the types marked "never" above; blocks already cut or cleared
(`app.core.cut.is_marked`); the current round's request (the last user message that is not
only tool results) and, after it, every assistant message with thinking blocks, with its
tool results (the provider needs the thinking of the tool loop in progress).

Removing messages can leave two messages of one role side by side, or an assistant message
first. A gap message of the other role (`GAP_TEXT`) goes between them instead of merging:
every kept message stays exactly as sent, its metadata and summary prefix included, so the
next compaction classifies it the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from app.core.assemble import SUMMARY_ACK, SUMMARY_PREFIX
from app.core.compact_json import compact_json
from app.core.cut import Count, is_marked, preview_input, preview_result
from app.core.history import user_words
from app.core.messages import (
    Message,
    RedactedThinkingBlock,
    Role,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    is_tool_result_message,
    message_text,
    text_message,
    tool_result_text,
    tool_uses,
)
from app.core.provider import BOOKKEEPING
from app.core.result import PhaseInfo

ItemType = Literal[
    "system_prompt",
    "memory",
    "compaction_summary",
    "tool_block",
    "skill_prompt",
    "skill_metadata",
    "assistant_message",
    "user_message",
]
METADATA_KINDS: dict[str, ItemType] = {
    "memory": "memory",
    "compaction_summary": "compaction_summary",
    "skill_prompt": "skill_prompt",
    "skill_metadata": "skill_metadata",
}
GAP_TEXT = "[Earlier messages compacted]"

CountEach = Callable[[Sequence[Message]], list[int]]


@dataclass(frozen=True)
class SelectiveLimits:
    """The rules' parameters and their defaults."""

    keep_recent: int = 5
    tool_call_threshold: int = 500
    tool_result_threshold: int = 600
    preview_tokens: int = 200
    fallback_to_summary: bool = True


@dataclass(frozen=True)
class Rule:
    phase: str
    item_type: ItemType
    action: Literal["truncate", "drop"]
    priority: int


RULES = (
    Rule("tool_blocks", "tool_block", "truncate", 10),
    Rule("skill_prompt", "skill_prompt", "drop", 20),
    Rule("assistant_message", "assistant_message", "truncate", 30),
    Rule("skill_metadata", "skill_metadata", "drop", 40),
    Rule("user_message", "user_message", "truncate", 50),
)


@dataclass(frozen=True)
class SelectivePlan:
    """The rules' outcome: the whole new list (head included) and what changed."""

    messages: tuple[Message, ...]
    token_count: int
    phases: tuple[PhaseInfo, ...]
    compacted_indexes: tuple[int, ...]
    head_length: int
    memory_indexes: tuple[int, ...]


@dataclass(frozen=True)
class _State:
    """The rest as slots, one per original message: the message now, or None if dropped."""

    slots: tuple[Message | None, ...]


def metadata_kind(message: Message) -> str | None:
    """`metadata.kind` as the agent sent it, in either format."""
    metadata: Any = message.metadata
    if metadata is None:
        note = (message.model_extra or {}).get(BOOKKEEPING)
        extra = note.get("extra") if isinstance(note, dict) else None
        metadata = extra.get("metadata") if isinstance(extra, dict) else None
    kind = metadata.get("kind") if isinstance(metadata, dict) else None
    return kind if isinstance(kind, str) else None


def _has_results(message: Message) -> bool:
    return message.role == "user" and any(isinstance(b, ToolResultBlock) for b in message.blocks())


def classify(messages: Sequence[Message]) -> list[ItemType]:
    """The item type of every message (see the module doc)."""
    types: list[ItemType] = []
    for i, message in enumerate(messages):
        kind = METADATA_KINDS.get(metadata_kind(message) or "")
        if message.role == "system":
            types.append("system_prompt")
        elif any(tool_uses(message)) or _has_results(message):
            types.append("tool_block")
        elif kind is not None:
            types.append(kind)
        elif (
            message.role == "user" and message_text(message).startswith(SUMMARY_PREFIX.strip())
        ) or (
            message.role == "assistant"
            and message_text(message) == SUMMARY_ACK
            and i > 0
            and types[-1] == "compaction_summary"
        ):
            types.append("compaction_summary")
        else:
            types.append("assistant_message" if message.role == "assistant" else "user_message")
    return types


def current_round_start(messages: Sequence[Message], start: int) -> int:
    """Index of the last user message that is not only tool results (`start` if none)."""
    for i in range(len(messages) - 1, start - 1, -1):
        message = messages[i]
        if message.role == "user" and not is_tool_result_message(message):
            return i
    return start


def protected_indexes(messages: Sequence[Message], start: int) -> frozenset[int]:
    """The current request, and the current round's assistant messages with thinking blocks
    together with the tool results answering them."""
    first = current_round_start(messages, start)
    protected = {first} if messages[first].role == "user" else set()
    for i in range(first, len(messages)):
        blocks = messages[i].blocks()
        if messages[i].role == "assistant" and any(
            isinstance(b, ThinkingBlock | RedactedThinkingBlock) for b in blocks
        ):
            protected.add(i)
            if any(tool_uses(messages[i])) and i + 1 < len(messages):
                protected.add(i + 1)
    return frozenset(protected)


def gap_filled(messages: Sequence[Message]) -> list[Message]:
    """The messages with a gap message wherever two of one role meet or an assistant
    message comes first (system messages excepted)."""
    out: list[Message] = []
    previous: Role | None = None
    for message in messages:
        if message.role == "system":
            out.append(message)
            continue
        if message.role == previous or (previous is None and message.role == "assistant"):
            out.append(
                text_message("user" if message.role == "assistant" else "assistant", GAP_TEXT)
            )
        out.append(message)
        previous = message.role
    return out


class _Planner:
    def __init__(
        self,
        messages: Sequence[Message],
        head_length: int,
        limits: SelectiveLimits,
        count: Count,
        count_each: CountEach,
    ) -> None:
        self.messages = tuple(messages)
        self.head = self.messages[:head_length]
        self.start = head_length
        self.types = classify(self.messages)
        self.protected = protected_indexes(self.messages, head_length)
        self.limits = limits
        self.count = count
        self.count_each = count_each
        self.counts = dict(enumerate(count_each(self.messages)))

    def index(self, slot: int) -> int:
        return self.start + slot

    def assemble(self, state: _State) -> tuple[list[Message], int]:
        rest = [m for m in state.slots if m is not None]
        out = [*self.head, *gap_filled(rest)]
        # unchanged messages keep their counts; only new or changed ones are counted
        original = {id(self.messages[i]): n for i, n in self.counts.items()}
        fresh = [m for m in out if id(m) not in original]
        fresh_counts = dict(zip(map(id, fresh), self.count_each(fresh), strict=True))
        return out, sum(original.get(id(m), fresh_counts.get(id(m), 0)) for m in out)

    def slots_of(self, item_type: ItemType, state: _State) -> list[int]:
        return [
            slot
            for slot, message in enumerate(state.slots)
            if message is not None
            and self.types[self.index(slot)] == item_type
            and self.index(slot) not in self.protected
        ]

    def apply(self, rule: Rule, state: _State) -> tuple[_State, str]:
        if rule.item_type == "tool_block":
            return self.tool_blocks(state)
        if rule.item_type == "user_message":
            return self.user_messages(state)
        candidates = self.slots_of(rule.item_type, state)
        keep = self.limits.keep_recent if rule.action == "truncate" else 0
        dropped = candidates[: max(len(candidates) - keep, 0)]
        slots = list(state.slots)
        for slot in dropped:
            slots[slot] = None
        return _State(tuple(slots)), f"dropped {len(dropped)} messages"

    def tool_blocks(self, state: _State) -> tuple[_State, str]:
        calls = [
            slot
            for slot in self.slots_of("tool_block", state)
            if self.messages[self.index(slot)].role == "assistant"
        ]
        keep = self.limits.keep_recent
        dropped, kept = calls[: max(len(calls) - keep, 0)], calls[max(len(calls) - keep, 0) :]
        slots = list(state.slots)
        for slot in dropped:
            slots[slot] = None
            answer = slots[slot + 1] if slot + 1 < len(slots) else None
            if answer is not None and _has_results(answer):
                slots[slot + 1] = _without_results(answer)
        inputs = results = 0
        for slot in kept:
            call = slots[slot]
            if call is not None:
                slots[slot], n = self.cut_inputs(call)
                inputs += n
            answer = slots[slot + 1] if slot + 1 < len(slots) else None
            if answer is not None and self.index(slot + 1) not in self.protected:
                slots[slot + 1], n = self.cut_results(answer)
                results += n
        detail = f"dropped {len(dropped)} tool blocks, cut {inputs} inputs and {results} results"
        return _State(tuple(slots)), detail

    def cut_inputs(self, message: Message) -> tuple[Message, int]:
        limits, cut = self.limits, 0
        blocks = list(message.blocks())
        for i, block in enumerate(blocks):
            if (
                isinstance(block, ToolUseBlock)
                and not is_marked(block)
                and self.count(compact_json(block.input)) > limits.tool_call_threshold
            ):
                blocks[i] = preview_input(block, limits.preview_tokens, self.count)
                cut += 1
        return (message.model_copy(update={"content": blocks}) if cut else message), cut

    def cut_results(self, message: Message) -> tuple[Message, int]:
        limits, cut = self.limits, 0
        blocks = list(message.blocks())
        for i, block in enumerate(blocks):
            if isinstance(block, ToolResultBlock) and not is_marked(block):
                text = tool_result_text(block)
                if self.count(text) > limits.tool_result_threshold:
                    blocks[i] = preview_result(block, text, limits.preview_tokens, self.count)
                    cut += 1
        return (message.model_copy(update={"content": blocks}) if cut else message), cut

    def user_messages(self, state: _State) -> tuple[_State, str]:
        candidates = [
            slot
            for slot, message in enumerate(state.slots)
            if message is not None
            and self.types[self.index(slot)] in ("user_message", "tool_block")
            and message.role == "user"
            and not is_tool_result_message(message)
            and not user_words(message)
            and self.index(slot) not in self.protected
        ]
        keep = self.limits.keep_recent
        dropped = candidates[: max(len(candidates) - keep, 0)]
        slots = list(state.slots)
        for slot in dropped:
            message = slots[slot]
            slots[slot] = _only_results(message) if message is not None else None
        return _State(tuple(slots)), f"dropped {len(dropped)} messages"


def _without_results(message: Message) -> Message | None:
    """The user's own blocks of a message that also answered tool calls (None if none)."""
    others = [b for b in message.blocks() if not isinstance(b, ToolResultBlock)]
    return message.model_copy(update={"content": others}) if others else None


def _only_results(message: Message) -> Message | None:
    results = [b for b in message.blocks() if isinstance(b, ToolResultBlock)]
    return message.model_copy(update={"content": results}) if results else None


def plan_selective(
    messages: Sequence[Message],
    head_length: int,
    limits: SelectiveLimits,
    target: int,
    count: Count,
    count_each: CountEach,
    *,
    force: bool = False,
) -> SelectivePlan:
    """Runs the rules in priority order until the list counts under `target` tokens (all
    of them with `force`); phases report the whole list's tokens before and after each."""
    planner = _Planner(messages, head_length, limits, count, count_each)
    state = _State(tuple(messages[head_length:]))
    tokens = sum(planner.counts.values())
    phases = [PhaseInfo(phase="selective_start", tokens_before=tokens, tokens_after=tokens)]
    start_tokens = tokens
    out = list(messages)
    for rule in sorted(RULES, key=lambda r: r.priority):
        if tokens < target and not force:
            break
        state, detail = planner.apply(rule, state)
        out, after = planner.assemble(state)
        phases.append(
            PhaseInfo(phase=rule.phase, tokens_before=tokens, tokens_after=after, detail=detail)
        )
        tokens = after
    phases.append(
        PhaseInfo(phase="selective_done", tokens_before=start_tokens, tokens_after=tokens)
    )
    changed = tuple(
        planner.index(slot)
        for slot, message in enumerate(state.slots)
        if message is not messages[planner.index(slot)]
    )
    memory = tuple(i for i, t in enumerate(planner.types) if t == "memory" and i >= head_length)
    return SelectivePlan(
        messages=tuple(out),
        token_count=tokens,
        phases=tuple(phases),
        compacted_indexes=changed,
        head_length=head_length,
        memory_indexes=memory,
    )
