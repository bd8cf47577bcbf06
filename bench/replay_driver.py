"""One long session replayed through the service the way an agent loop uses it.

The original messages are appended one by one to the agent's running context. Before every
assistant message (a model request is about to be made with the context as it stands, tool
results already appended) the driver asks `/should-compact` with the window; when told yes
it calls `/compact` with the same window, the conversation's `session_id` and the strategy,
and goes on from the compacted list. A compacted list that ends with an assistant turn gets
the minimal user turn an agent sends in the middle of a tool loop ("Continue.") before the
next assistant message. What the model would have been sent is counted at every request.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import orjson

from app.core.messages import Message
from app.core.validate import anthropic_violations, openai_violations
from bench.replay_facts import KINDS, Msg, context_text, extract, kept

Shape = Literal["anthropic", "openai"]
CONTINUE: Msg = {"role": "user", "content": "Continue."}
JSON = {"content-type": "application/json"}
MAX_SAMPLES = 5
REFILL_TURNS = 3  # a compaction this few model requests after the previous one is a refill


@dataclass(frozen=True)
class Conversation:
    name: str
    shape: Shape
    messages: list[Msg]


@dataclass
class RunResult:
    """What one (conversation, strategy, window) replay saw."""

    conversation: str
    shape: str
    strategy: str
    window: int
    messages: int = 0
    llm_calls: int = 0
    compactions: int = 0
    continuations: int = 0
    refills: int = 0
    last_compaction_call: int | None = field(default=None, repr=False)
    refusals: Counter[str] = field(default_factory=Counter)
    answered_by: Counter[str] = field(default_factory=Counter)
    max_sent_tokens: int = 0
    over_window: int = 0
    invalid: int = 0
    invalid_samples: list[str] = field(default_factory=list)
    http_errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    facts: dict[str, list[int]] = field(default_factory=dict)
    first_request_kept: bool = False
    ledger_tokens_max: int = 0
    summary_tokens_max: int = 0
    final_tokens: int = 0
    final_valid: bool = True
    wall_seconds: float = 0.0
    final_context: list[Msg] = field(default_factory=list, repr=False)

    def as_json(self) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "shape": self.shape,
            "strategy": self.strategy,
            "window": self.window,
            "messages": self.messages,
            "llm_calls": self.llm_calls,
            "compactions": self.compactions,
            "continuations": self.continuations,
            "refills": self.refills,
            "refusals": dict(sorted(self.refusals.items())),
            "answered_by": dict(sorted(self.answered_by.items())),
            "max_sent_tokens": self.max_sent_tokens,
            "over_window": self.over_window,
            "invalid": self.invalid,
            "invalid_samples": self.invalid_samples,
            "http_errors": self.http_errors,
            "error_samples": self.error_samples,
            "facts": {k: {"kept": v[0], "total": v[1]} for k, v in self.facts.items()},
            "first_request_kept": self.first_request_kept,
            "ledger_tokens_max": self.ledger_tokens_max,
            "ledger_share_max": round(self.ledger_tokens_max / self.window, 4),
            "summary_tokens_max": self.summary_tokens_max,
            "final_tokens": self.final_tokens,
            "final_valid": self.final_valid,
            "wall_seconds": round(self.wall_seconds, 3),
        }


def violations_of(messages: list[Msg], shape: str, *, pending_tail_ok: bool = False) -> list[str]:
    """The provider's rules (`app/core/validate.py`) broken by `messages`, in their shape."""
    if shape == "openai":
        found = openai_violations(messages, pending_tail_ok=pending_tail_ok)
    else:
        parsed = [Message.model_validate(m) for m in messages]
        found = anthropic_violations(parsed, pending_tail_ok=pending_tail_ok)
    return [f"{v.index}: {v}" for v in found]


def ledger_text(ledger: list[dict[str, Any]]) -> str:
    """The ledger as the summary shows it, rebuilt from the answer's `ledger` facts."""
    return "\n".join(["## Ledger", *(f"- [{f['kind']}] {f['text']}" for f in ledger)])


class ServiceClient:
    """The three routes the loop uses, over any httpx client (in-process or real)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        response = await self.client.post(path, content=orjson.dumps(body), headers=JSON)
        data = orjson.loads(response.content) if response.content else {}
        return response.status_code, data if isinstance(data, dict) else {"body": data}


def _sample(samples: list[str], text: str) -> None:
    if len(samples) < MAX_SAMPLES:
        samples.append(text[:300])


async def replay(
    service: ServiceClient,
    conversation: Conversation,
    strategy: str,
    window: int,
    count_text: Callable[[str], int],
    *,
    force: bool = False,
) -> RunResult:
    """Replays `conversation` and returns what happened; never raises on a service error
    (a non-200 answer is counted and the loop goes on with the context it had)."""
    result = RunResult(conversation.name, conversation.shape, strategy, window)
    session_id = f"replay.{conversation.name}.{conversation.shape}.{strategy}.{window}"
    fmt = conversation.shape
    context: list[Msg] = []
    started = time.perf_counter()
    for message in conversation.messages:
        if message.get("role") == "assistant" and context:
            context = await _before_request(
                service, result, context, fmt, strategy, window, session_id, force, count_text
            )
        context.append(message)
    result.messages = len(conversation.messages)
    result.wall_seconds = time.perf_counter() - started
    status, counted = await service.post("/count", {"messages": context, "format": fmt})
    result.final_tokens = int(counted.get("token_count", 0)) if status == 200 else -1
    result.final_valid = not violations_of(context, fmt, pending_tail_ok=True)
    result.final_context = context
    truth = extract(conversation.messages)
    found = kept(truth, context)
    result.facts = {kind: list(found[kind]) for kind in KINDS}
    first = truth.by_kind["request"][:1]
    result.first_request_kept = bool(first) and first[0] in context_text(context)
    return result


async def _before_request(
    service: ServiceClient,
    result: RunResult,
    context: list[Msg],
    fmt: str,
    strategy: str,
    window: int,
    session_id: str,
    force: bool,
    count_text: Callable[[str], int],
) -> list[Msg]:
    """The agent's step before a model request: ask, compact when told, count what is sent."""
    result.llm_calls += 1
    body = {"messages": context, "format": fmt, "context_window": window}
    status, decision = await service.post("/should-compact", body)
    if status != 200:
        result.http_errors += 1
        _sample(result.error_samples, f"/should-compact {status}: {decision}")
        return context
    sent = int(decision["token_count"])
    if decision["should_compact"]:
        request = {
            "messages": context,
            "format": fmt,
            "session_id": session_id,
            "force": force,
            "options": {"strategy": strategy, "context_window": window},
        }
        status, answer = await service.post("/compact", request)
        if status != 200:
            result.http_errors += 1
            _sample(result.error_samples, f"/compact {status}: {answer}")
        elif not answer["compacted"]:
            result.refusals[str(answer.get("reason"))] += 1
        else:
            context = _compacted(result, answer, fmt, count_text)
            status, counted = await service.post("/count", {"messages": context, "format": fmt})
            if status == 200:
                sent = int(counted["token_count"])
            else:
                result.http_errors += 1
                _sample(result.error_samples, f"/count {status}: {counted}")
    result.max_sent_tokens = max(result.max_sent_tokens, sent)
    if sent >= window:
        result.over_window += 1
    return context


def _compacted(
    result: RunResult, answer: dict[str, Any], fmt: str, count_text: Callable[[str], int]
) -> list[Msg]:
    result.compactions += 1
    last = result.last_compaction_call
    if last is not None and result.llm_calls - last <= REFILL_TURNS:
        result.refills += 1
    result.last_compaction_call = result.llm_calls
    result.answered_by[str(answer.get("strategy"))] += 1
    messages: list[Msg] = list(answer["messages"])
    problems = violations_of(messages, fmt)
    if problems:
        result.invalid += 1
        _sample(result.invalid_samples, f"compaction {result.compactions}: {problems[0]}")
    if answer.get("ledger"):
        tokens = count_text(ledger_text(answer["ledger"]))
        result.ledger_tokens_max = max(result.ledger_tokens_max, tokens)
    if answer.get("summary"):
        result.summary_tokens_max = max(result.summary_tokens_max, count_text(answer["summary"]))
    if messages and messages[-1].get("role") == "assistant":
        messages.append(dict(CONTINUE))
        result.continuations += 1
    return messages
