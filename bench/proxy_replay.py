"""Long sessions replayed through the proxy, as an agent that keeps its whole history would
send them: before each assistant turn of a recorded session, the history so far goes to the
proxy (the recorded assistant turn then follows, whatever the fake provider answered). The
fake provider refuses over its window with the providers' own errors and reports prompt
caching; a background compaction takes `summary_seconds`, a turn `turn_seconds`.

Those are the scenario's times scaled down (`bench.proxy --time-scale`); the proxy's own
work (counting, the extractive summary of a standby, archives) is not, so a turn would end
before work that takes a fraction of a real one. Between turns the replay therefore waits
until every background compaction is done or waiting on the configured summarizer (at
most `local_seconds`, the turn's real length): the proxy's work takes no time of the
scaled clock, as against a real turn it takes next to none.

Measured per replay: context-length errors that reached the agent, what the proxy did
(compactions put in from the background without the agent waiting, or made while it
waited: at once, or after the provider refused the request as too long), the share of
each request read from the provider's cache (between compactions, and on the first
request after one), and the session's facts (`bench.replay_facts`) found in the last
request the provider received.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from app.core.ports import SummaryRequest
from app.core.summary import SUMMARY_SYSTEM, build_summary_prompt, serialize_for_summary
from bench.proxy_http import Client
from bench.replay_facts import KINDS, extract, kept
from tests.fakes.provider import FakeProvider, Limits
from tests.fakes.provider.prompt import anthropic_segments, openai_chat_segments
from tests.fakes.provider.windows import Counter as TokenCounter
from tests.proxy.live import serve_proxy

Msg = dict[str, Any]
MODEL = {"anthropic": "claude-bench", "openai": "gpt-bench"}
OVERFLOW = (b"prompt is too long", b"exceed context limit", b"context_length_exceeded")
START = 0.7  # the proxy's default start mark (COMPACT_PROXY_START)
OUTPUT = 2000  # the output budget each request asks for (`max_tokens`)


@dataclass
class Replay:
    name: str
    shape: str
    window: int
    requests: int = 0
    overflows: int = 0
    other_errors: int = 0
    actions: Counter[str] = field(default_factory=Counter)
    compactions: Counter[str] = field(default_factory=Counter)  # new heads, by how they came
    # Compactions made while the agent waited after one turn that added more than the
    # room between the start mark and the limit: no compaction begun at the start mark
    # could have been ready.
    jumps: int = 0
    # Heads put in without the agent waiting whose summary is the extractive summarizer's,
    # made in the background because the configured one could not have been ready.
    quick: int = 0
    between: list[float] = field(default_factory=list)  # cache-read shares between compactions
    after: list[float] = field(default_factory=list)  # ... of the first request after one
    after_later: list[float] = field(default_factory=list)  # ... after one that had a head
    # ... of the first request after one, of what it resent: all but the turn it added
    # (new to the provider, which no proxy could have had cached).
    after_resent: list[float] = field(default_factory=list)
    facts: dict[str, tuple[int, int]] = field(default_factory=dict)
    largest: int = 0  # the provider's largest input count
    # The configured summarizer's cost: its calls, those whose input repeats an earlier
    # call's exactly, the tokens an LLM would read (its prompt), and the agent's own input
    # as the provider bills it (cache reads at a tenth, cache writes at 1.25).
    summarizer_calls: int = 0
    repeated: int = 0
    summarizer_input: int = 0
    billed: float = 0.0


class Delayed:
    """The configured summarizer, `seconds` slower: a real LLM's time, for the background.
    `waiting`: the calls inside that time. Each call's input is kept (`inputs`) as an LLM
    would read it (the prompt; for the extractive summarizer, which builds none, the prompt
    an LLM would have had), counted after the replay, off the app's loop."""

    def __init__(self, inner: Any, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds
        self.waiting = 0
        self.inputs: list[str] = []

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def reads_prompt(self) -> bool:
        return bool(self.inner.reads_prompt)

    async def summarize(self, request: SummaryRequest) -> str:
        prompt = request.prompt or build_summary_prompt(
            serialize_for_summary(request.messages, clip=True),
            request.max_words,
            request.instructions,
        )
        self.inputs.append(f"{request.system or SUMMARY_SYSTEM}\n{request.section}\n{prompt}")
        self.waiting += 1
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self.waiting -= 1
        return str(await self.inner.summarize(request))

    async def aclose(self) -> None:
        await self.inner.aclose()


SYSTEM = "You are a coding agent working in the user's repository. " * 150  # ~1.7k tokens
MARK = {"type": "ephemeral"}


def _request(shape: str, context: list[Msg]) -> dict[str, Any]:
    """The agent's request: Claude Code's breakpoints for Anthropic (the system prompt, and
    the last message, moving each turn); OpenAI caches by itself."""
    if shape == "openai":
        prompt = {"role": "system", "content": SYSTEM}
        return {"model": MODEL[shape], "max_tokens": OUTPUT, "messages": [prompt, *context]}
    last = context[-1]
    content = last["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    if blocks:
        blocks[-1] = {**blocks[-1], "cache_control": MARK}
    system = [{"type": "text", "text": SYSTEM, "cache_control": MARK}]
    marked = [*context[:-1], {**last, "content": blocks}]
    return {"model": MODEL[shape], "max_tokens": OUTPUT, "system": system, "messages": marked}


def _usage(exchange: Any) -> dict[str, Any]:
    body = b"".join(exchange.sent.chunks)
    try:
        usage = orjson.loads(body).get("usage") or {}
    except orjson.JSONDecodeError:
        return {}
    return usage if isinstance(usage, dict) else {}


def _billed(usage: dict[str, Any]) -> float:
    """The request's input as the provider bills it, in input tokens: cache reads at a
    tenth, cache writes (Anthropic's) at 1.25."""
    if "prompt_tokens" in usage:
        read = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        return int(usage["prompt_tokens"]) - read + 0.1 * read
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    return int(usage.get("input_tokens") or 0) + 0.1 * read + 1.25 * written


def _costed(result: Replay, delayed: Delayed, tokenizer: Any) -> None:
    """The configured summarizer's calls, repeated inputs and input tokens."""
    seen: set[bytes] = set()
    for text in delayed.inputs:
        digest = hashlib.sha256(text.encode()).digest()
        result.repeated += digest in seen
        seen.add(digest)
    result.summarizer_calls = len(delayed.inputs)
    result.summarizer_input = sum(tokenizer.count_batch(delayed.inputs)) if delayed.inputs else 0


def _shares(usage: dict[str, Any]) -> tuple[int, float]:
    if "prompt_tokens" in usage:
        total = int(usage["prompt_tokens"])
        read = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    else:
        read = int(usage.get("cache_read_input_tokens") or 0)
        total = read + int(usage.get("input_tokens") or 0)
        total += int(usage.get("cache_creation_input_tokens") or 0)
    return total, (read / total if total else 0.0)


async def _local_work_done(compactor: Any, delayed: Delayed, seconds: float) -> None:
    """Until every background compaction is done or inside the configured summarizer's
    delay, for at most `seconds` (the app runs on a loop of its own: polled)."""
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        tasks = [t for s in compactor._sessions.values() for t in (s.running, s.spare)]
        if sum(t is not None and not t.done() for t in tasks) <= delayed.waiting:
            return
        await asyncio.sleep(0.002)


def _turn_tokens(limits: Limits, shape: str, body: bytes, added: int) -> int:
    """The provider's count of the last `added` messages of the request it received: the
    turn the agent added since its previous request (the proxy leaves those as sent)."""
    received = orjson.loads(body)
    segments = anthropic_segments if shape == "anthropic" else openai_chat_segments
    counter = TokenCounter(limits)
    without = {**received, "messages": received["messages"][:-added]} if added else received
    return counter.total(segments(received)) - counter.total(segments(without))


async def replay(
    name: str,
    shape: str,
    messages: list[Msg],
    window: int,
    data: Path,
    summary_seconds: float,
    turn_seconds: float,
    local_seconds: float = 5.0,
) -> Replay:
    result = Replay(name, shape, window)
    limit = window - OUTPUT  # what the proxy judges each request against
    limits = Limits(windows={MODEL[shape]: window}, factor=1.1 if shape == "anthropic" else 1.0)
    models = {
        "claude-bench": {"context_window": window, "tokenizer": "tiktoken", "margin": 0.2},
        "gpt-bench": {"context_window": window, "tokenizer": "tiktoken", "margin": 0.1},
    }
    with (
        FakeProvider(limits, validate=False) as provider,
        serve_proxy(provider.url, data, models=models) as live,
    ):
        assert live.app.compactor is not None
        background = live.app.compactor.background
        delayed = Delayed(background.summarizer, summary_seconds)
        background.summarizer = delayed
        host, port = live.proxy.removeprefix("http://").split(":")
        client = Client(host, int(port))
        path = "/v1/messages" if shape == "anthropic" else "/v1/chat/completions"
        headers = {"x-api-key": "sk-bench", "anthropic-version": "2023-06-01"}
        if shape == "openai":
            headers = {"authorization": "Bearer sk-bench"}
        context: list[Msg] = []
        sent = 0  # the messages of the context the last request carried
        fresh = False
        previous = 0  # the agent's last request, as the proxy counted it (0: not counted)
        last_head = None  # the session's head after the last request
        # Before each assistant turn, and at the end when the session ends with the user's
        # turn (the agent sends it too: its facts are the provider's to receive).
        ending = [] if messages and messages[-1].get("role") == "assistant" else [None]
        for message in [*messages, *ending]:
            if (message is None or message.get("role") == "assistant") and context:
                body = _request(shape, context)
                answer = await client.post(
                    path, orjson.dumps(body), {**headers, "x-compact-session": name}
                )
                result.requests += 1
                action = answer.headers.get("x-compact-action", "?")
                result.actions[action] += 1
                if answer.status != 200:
                    overflow = any(o in answer.body for o in OVERFLOW)
                    result.overflows += overflow
                    result.other_errors += not overflow
                else:
                    usage = _usage(provider.last)
                    total, share = _shares(usage)
                    result.billed += _billed(usage)
                    result.largest = max(result.largest, total)
                    sessions = list(live.app.compactor._sessions.values())
                    head = sessions[-1].head if sessions else None
                    new_head = action in ("applied", "compacted", "retried") and (
                        head is not None and head is not last_head
                    )
                    last_head = head
                    if new_head:
                        if sum(result.compactions.values()):  # a previous head to keep
                            result.after_later.append(share)
                        result.compactions[action] += 1
                        result.quick += action == "applied" and head is not None and head.quick
                        grew = int(answer.headers.get("x-compact-tokens-before", 0)) - previous
                        waited = action != "applied"
                        result.jumps += waited and grew > (1 - START) * limit
                        result.after.append(share)
                        turn = _turn_tokens(
                            limits, shape, provider.last.received.body, len(context) - sent
                        )
                        result.after_resent.append(share * total / max(1, total - turn))
                        fresh = True
                    elif fresh:
                        result.between.append(share)
                    previous = int(answer.headers.get("x-compact-tokens-before") or 0)
                sent = len(context)
                await asyncio.sleep(turn_seconds)
                await _local_work_done(live.app.compactor, delayed, local_seconds)
            if message is not None:
                context.append(message)
        await client.close()
        last = orjson.loads(provider.requests[-1].body)["messages"]
        truth = extract(messages)
        result.facts = kept(truth, last)
        _costed(result, delayed, background.tokenizer)
    return result


def summed(replays: list[Replay]) -> dict[str, Any]:
    """The totals of a group of replays."""
    actions: Counter[str] = Counter()
    compactions: Counter[str] = Counter()
    for r in replays:
        actions.update(r.actions)
        compactions.update(r.compactions)
    made = sum(compactions.values())
    jumps = sum(r.jumps for r in replays)
    quick = sum(r.quick for r in replays)
    facts = {
        k: (sum(r.facts[k][0] for r in replays), sum(r.facts[k][1] for r in replays)) for k in KINDS
    }
    between = [s for r in replays for s in r.between]
    after = [s for r in replays for s in r.after]
    later = [s for r in replays for s in r.after_later]
    resent = [s for r in replays for s in r.after_resent]
    calls = sum(r.summarizer_calls for r in replays)
    billed = sum(r.billed for r in replays)
    return {
        "requests": sum(r.requests for r in replays),
        "overflows": sum(r.overflows for r in replays),
        "other_errors": sum(r.other_errors for r in replays),
        "actions": dict(actions),
        "compactions": dict(compactions),
        "without_waiting": (compactions["applied"] / made) if made else None,
        "jumps": jumps,
        "quick": quick,
        "foreseen_without_waiting": (
            compactions["applied"] / (made - jumps) if made > jumps else None
        ),
        "cache_between": sum(between) / len(between) if between else None,
        "cache_after": sum(after) / len(after) if after else None,
        "cache_after_later": sum(later) / len(later) if later else None,
        "cache_after_resent": sum(resent) / len(resent) if resent else None,
        "facts": facts,
        "all_facts": (sum(v[0] for v in facts.values()), sum(v[1] for v in facts.values())),
        "summarizer_calls": calls,
        "calls_per_head": calls / made if made else None,
        "repeated": sum(r.repeated for r in replays),
        "summarizer_input": sum(r.summarizer_input for r in replays),
        "billed": round(billed),
        "summarizer_share": sum(r.summarizer_input for r in replays) / billed if billed else None,
    }
