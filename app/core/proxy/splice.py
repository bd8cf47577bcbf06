"""The compacted head a session's requests carry from a compaction on, found and put in.

A proxied agent keeps sending its whole history. Once a compaction has replaced the first
`replaced` of its messages with a head (the summary turn, restored files, and for the
OpenAI shape the leading system messages as sent), every later request that still starts
with those messages gets the *same* head, byte for byte, followed by what came after them:
the provider's prompt cache keeps hitting. A request that no longer starts with them (the
agent rewrote its history) is sent as it is.

Where a compaction may cut (`boundaries`): before an assistant message (what precedes it
ends with its tool results, all answered) or before a user message that is a new request
(no tool results in it). A head that ends with the assistant's acknowledgement, before a
kept assistant message, gets a user `Continue.` between them so that roles alternate.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from app.core.assemble import CONTINUE
from app.core.cost import NO_COST, SummarizerCost

JsonDict = dict[str, Any]
MAX_BREAKPOINTS = 4
EPHEMERAL: JsonDict = {"type": "ephemeral"}
# The lifetimes of Anthropic's cache, shortest first (no `ttl`: the first).
TTLS = ("5m", "1h")


def prefix_digest(messages: Sequence[Mapping[str, Any]]) -> str:
    """sha256 of the messages' JSON as the model reads them: what finds a compacted prefix
    again. An agent moves its cache breakpoint to its latest message each turn (Claude
    Code; an SDK user wraps the last text in a block to mark it), so a block's
    `cache_control` is left out and a lone text block reads as its text: the history is
    the same whichever message carried the mark."""
    return hashlib.sha256(orjson.dumps([as_read(m) for m in messages])).hexdigest()


def as_read(message: Mapping[str, Any]) -> Any:
    """`message` as the model reads it: its blocks without `cache_control`, a lone text
    block as its text (a client wraps its latest message's text in a block to mark it)."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks = [
        {k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, Mapping) else b
        for b in content
    ]
    lone = blocks[0] if len(blocks) == 1 else None
    if isinstance(lone, Mapping) and lone.keys() == {"type", "text"} and lone["type"] == "text":
        return {**message, "content": lone["text"]}
    return {**message, "content": blocks}


@dataclass(frozen=True)
class Head:
    """A compaction's head: `core` stands for the client's first `replaced` messages
    (whose JSON hashes to `digest`); `seam` is the user turn put after it when the first
    kept message is the assistant's. `tokens`: the head's count, as the service counted it;
    `pinned`: the messages at its start that are the client's own, as sent (the session's
    first ones, which every head keeps); `quick`: its summary is the extractive
    summarizer's, made for a request that could not wait for the configured one;
    `unpinned`: it summarizes the pinned messages too (a standby for a turn they leave no
    room for, put in over the limit only; a compaction made at once that cannot fit them);
    `replaced_tokens`: our count of the replaced messages when it was made, so that the
    count of what the agent sent needs no count of them again; `archive`: the id of the
    archive its compaction wrote (deleted if it is never put in); `cost`: what its summary
    cost (the answer that puts it in says so)."""

    core: tuple[JsonDict, ...]
    replaced: int
    digest: str
    seam: bool
    tokens: int
    pinned: int = 0
    quick: bool = False
    unpinned: bool = False
    replaced_tokens: int = 0
    archive: str | None = None
    cost: SummarizerCost = NO_COST

    @property
    def messages(self) -> list[JsonDict]:
        return [*self.core, {"role": "user", "content": CONTINUE}] if self.seam else list(self.core)

    def unspliced(self, total: int, counts: Sequence[int]) -> int:
        """Our count of the client's own request, from the `total` of one this head was
        spliced into and `counts` of its messages: the head's counted as those it replaced."""
        return total - sum(counts[: len(self.messages)]) + self.replaced_tokens

    def splice(self, client: Sequence[JsonDict]) -> list[JsonDict] | None:
        """The messages to send in place of `client`'s: the head, then every message after
        the replaced ones; None when `client` does not start with them."""
        if len(client) < self.replaced or prefix_digest(client[: self.replaced]) != self.digest:
            return None
        return [*self.messages, *client[self.replaced :]]


def make_head(
    core: Sequence[JsonDict],
    client: Sequence[JsonDict],
    replaced: int,
    tokens: int,
    pinned: int = 0,
    replaced_tokens: int = 0,
) -> Head:
    """The head `core` standing for `client[:replaced]`, with its seam when needed: when it
    stands for all of `client`, the seam ends the request (and goes before the assistant's
    next turn in the later ones)."""
    after = _role(client[replaced]) if replaced < len(client) else "assistant"
    seam = bool(core) and _role(core[-1]) == "assistant" == after
    digest = prefix_digest(client[:replaced])
    return Head(
        tuple(core), replaced, digest, seam, tokens, pinned, replaced_tokens=replaced_tokens
    )


def _role(message: Mapping[str, Any]) -> str:
    role = message.get("role")
    return role if isinstance(role, str) else ""


def _has_tool_results(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content
    )


def boundaries(messages: Sequence[Mapping[str, Any]], start: int) -> Iterator[int]:
    """Each index after `start` where a compaction may cut: before an assistant message, or
    before a user message that carries no tool results (a new request), each following a
    message of the other role. Every message before such a cut is answered and complete."""
    for index in range(start + 1, len(messages)):
        role, previous = _role(messages[index]), _role(messages[index - 1])
        opens = role == "assistant" or (role == "user" and not _has_tool_results(messages[index]))
        if opens and role != previous:
            yield index


def choose_cut(
    messages: Sequence[Mapping[str, Any]],
    counts: Sequence[int],
    start: int,
    keep: int,
    read: bool = False,
) -> int | None:
    """The first message kept as sent: the earliest cut whose kept part takes at most
    `keep` tokens (the most kept within the budget), else the latest cut; None when there
    is no cut after `start`. `read`: the model will have read the latest message before
    the head goes in (a compaction made in the background), so the end of `messages` is a
    cut too, after it (when it is not the assistant's: a prefill is answered there)."""
    cuts = list(boundaries(messages, start))
    end = len(messages)
    if read and end > start and _role(messages[-1]) != "assistant" and end not in cuts:
        cuts.append(end)
    if not cuts:
        return None
    kept_from = [0] * (len(counts) + 1)
    for index in range(len(counts) - 1, -1, -1):
        kept_from[index] = kept_from[index + 1] + counts[index]
    return next((cut for cut in cuts if kept_from[cut] <= keep), cuts[-1])


def breakpoints(body: Mapping[str, Any]) -> int:
    """The `cache_control` breakpoints a request sets: on tools, system blocks, message
    blocks and at the top level."""
    found = 1 if isinstance(body.get("cache_control"), Mapping) else 0
    for tool in body.get("tools") or []:
        found += isinstance(tool, Mapping) and "cache_control" in tool
    system = body.get("system")
    for block in system if isinstance(system, list) else []:
        found += isinstance(block, Mapping) and "cache_control" in block
    return found + message_breakpoints(body.get("messages") or [])


def message_breakpoints(messages: Sequence[Any]) -> int:
    return sum(
        isinstance(b, Mapping) and "cache_control" in b for m in messages for b in _blocks(m)
    )


def with_breakpoint(message: JsonDict) -> JsonDict:
    """`message` with a breakpoint on its last content block (a string becomes a block)."""
    content = message.get("content")
    blocks = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    )
    if not blocks:
        return message
    blocks[-1] = {**blocks[-1], "cache_control": dict(EPHEMERAL)}
    return {**message, "content": blocks}


def lasting(messages: Sequence[JsonDict], head: int, automatic: Any = None) -> list[JsonDict]:
    """`messages`, each breakpoint of the first `head` (the compacted head's) living as long
    as the longest-lived after them, the request's `automatic` one (its top-level
    `cache_control`) too: the provider refuses a breakpoint before a longer-lived one."""
    later = [_ttl(b) for m in messages[head:] for b in _blocks(m)]
    later.append(_ttl({"cache_control": automatic}))
    longest = max((t for t in later if t is not None), key=TTLS.index, default=TTLS[0])
    if longest == TTLS[0]:
        return list(messages)
    out = []
    for message in messages[:head]:
        blocks = _blocks(message)
        if any(_ttl(b) not in (None, longest) for b in blocks):
            content = [
                {**b, "cache_control": {**b["cache_control"], "ttl": longest}}
                if _ttl(b) not in (None, longest)
                else b
                for b in blocks
            ]
            message = {**message, "content": content}
        out.append(message)
    return [*out, *messages[head:]]


def within_four(
    body: Mapping[str, Any], sent: list[JsonDict], head: int, live: Sequence[JsonDict] = ()
) -> list[JsonDict]:
    """`sent` (for `body`, a head's `head` messages first), the head's breakpoints living
    as long as the client's after them (`lasting`), or without them when with them the
    request (its `live` messages, kept apart, too) would set more than the provider's four."""
    if breakpoints({**body, "messages": [*sent, *live]}) > MAX_BREAKPOINTS:
        return [*without_breakpoints(sent[:head]), *sent[head:]]
    return lasting(sent, head, body.get("cache_control"))


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return content if isinstance(content, list) else []


def _ttl(block: Any) -> str | None:
    """A breakpoint's lifetime (None: no breakpoint, or a lifetime not among `TTLS`)."""
    mark = block.get("cache_control") if isinstance(block, Mapping) else None
    if not isinstance(mark, Mapping):
        return None
    ttl = mark.get("ttl", TTLS[0])
    return ttl if ttl in TTLS else None


def without_breakpoints(messages: Sequence[JsonDict]) -> list[JsonDict]:
    """The messages with every block's breakpoint removed."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(b, Mapping) and "cache_control" in b for b in content
        ):
            content = [
                {k: v for k, v in b.items() if k != "cache_control"}
                if isinstance(b, Mapping)
                else b
                for b in content
            ]
            message = {**message, "content": content}
        out.append(message)
    return out
