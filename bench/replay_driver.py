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
from app.core.provider.rules import anthropic_violations, openai_violations
from bench.replay_facts import KINDS, Msg, context_text, extract, kept

Shape = Literal["anthropic", "openai"]
CONTINUE: Msg = {"role": "user", "content": "Continue."}
JSON = {"content-type": "application/json"}
MAX_SAMPLES = 5
RECALL_QUERY_CHARS = 200  # a fact is at most this long; the query is the fact itself
REFILL_TURNS = 3  # a compaction this few model requests after the previous one is a refill


@dataclass(frozen=True)
class Conversation:
    name: str
    shape: Shape
    messages: list[Msg]
    agent: str = ""  # the agent kind (`cursor`, `claude-code`, ...), when the file says
    split: str = ""  # `dev` or `held-out`, when the file says


@dataclass
class RunResult:
    """What one (conversation, strategy, window) replay saw."""

    conversation: str
    shape: str
    strategy: str
    window: int
    agent: str = ""
    split: str = ""
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
    growth: int = 0  # compactions whose answer was no smaller than the context sent
    invalid: int = 0
    invalid_samples: list[str] = field(default_factory=list)
    http_errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    facts: dict[str, list[int]] = field(default_factory=dict)
    first_request_kept: bool = False
    missing: int = 0
    recalled: int = 0
    ledger_tokens_max: int = 0
    summary_tokens_max: int = 0
    final_tokens: int = 0
    final_valid: bool = True
    wall_seconds: float = 0.0
    final_context: list[Msg] = field(default_factory=list, repr=False)

    def as_json(self) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "agent": self.agent,
            "split": self.split,
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
            "growth": self.growth,
            "invalid": self.invalid,
            "invalid_samples": self.invalid_samples,
            "http_errors": self.http_errors,
            "error_samples": self.error_samples,
            "facts": {
                **{k: {"kept": v[0], "total": v[1]} for k, v in self.facts.items()},
                "all": {
                    "kept": sum(v[0] for v in self.facts.values()),
                    "total": sum(v[1] for v in self.facts.values()),
                },
            },
            "first_request_kept": self.first_request_kept,
            "missing": self.missing,
            "recalled": self.recalled,
            "ledger_tokens_max": self.ledger_tokens_max,
            "ledger_share_max": round(self.ledger_tokens_max / self.window, 4),
            "summary_tokens_max": self.summary_tokens_max,
            "final_tokens": self.final_tokens,
            "final_valid": self.final_valid,
            "wall_seconds": round(self.wall_seconds, 3),
        }


def run_from_json(data: dict[str, Any]) -> RunResult:
    """A run as `RunResult.as_json` wrote it (the samples and the final context aside)."""
    facts = {k: [v["kept"], v["total"]] for k, v in data["facts"].items() if k != "all"}
    fields = {
        k: data[k]
        for k in (
            "messages",
            "llm_calls",
            "compactions",
            "continuations",
            "refills",
            "max_sent_tokens",
            "over_window",
            "growth",
            "invalid",
            "http_errors",
            "first_request_kept",
            "missing",
            "recalled",
            "ledger_tokens_max",
            "summary_tokens_max",
            "final_tokens",
            "final_valid",
            "wall_seconds",
        )
        if k in data
    }
    return RunResult(
        data["conversation"],
        data["shape"],
        data["strategy"],
        data["window"],
        data.get("agent", ""),
        data.get("split", ""),
        refusals=Counter(data["refusals"]),
        answered_by=Counter(data["answered_by"]),
        facts=facts,
        **fields,
    )


def violations_of(messages: list[Msg], shape: str, *, pending_tail_ok: bool = False) -> list[str]:
    """The provider's rules (`app/core/provider/rules.py`) broken by `messages`, in their shape."""
    if shape == "openai":
        found = openai_violations(messages, pending_tail_ok=pending_tail_ok)
    else:
        parsed = [Message.model_validate(m) for m in messages]
        found = anthropic_violations(parsed, pending_tail_ok=pending_tail_ok)
    return [f"{v.index}: {v}" for v in found]


def ledger_section(summary: str) -> str:
    """The `## Ledger` section as the summary shows it (its closing recall line left out),
    or "" when the summary has none."""
    _, heading, section = summary.rpartition("\n## Ledger\n")
    if not heading:
        if not summary.startswith("## Ledger\n"):  # a ledger standing alone (`selective`)
            return ""
        section = summary.removeprefix("## Ledger\n")
    return "## Ledger\n" + section.split("\n\n", 1)[0]


def ledger_text(ledger: list[dict[str, Any]]) -> str:
    """The ledger as the summary shows it, rebuilt from the answer's `ledger` facts."""
    return "\n".join(["## Ledger", *(f"- [{f['kind']}] {f['text']}" for f in ledger)])


class ServiceClient:
    """The three routes the loop uses, over any httpx client (in-process or real)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.archives: dict[str, dict[str, Any]] = {}

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        response = await self.client.post(path, content=orjson.dumps(body), headers=JSON)
        data = orjson.loads(response.content) if response.content else {}
        return response.status_code, data if isinstance(data, dict) else {"body": data}

    async def archive(self, archive_id: str) -> dict[str, Any]:
        """An archive by id ({} when it cannot be read); each is read once."""
        if archive_id not in self.archives:
            response = await self.client.get(f"/archives/{archive_id}")
            data = orjson.loads(response.content) if response.status_code == 200 else {}
            self.archives[archive_id] = data if isinstance(data, dict) else {}
        return self.archives[archive_id]


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
    loop = _Loop(service, conversation, strategy, window, count_text, force)
    return await loop.run()


@dataclass
class _Loop:
    """One replay's state: the agent's running context and what was seen so far."""

    service: ServiceClient
    conversation: Conversation
    strategy: str
    window: int
    count_text: Callable[[str], int]
    force: bool
    result: RunResult = field(init=False)
    session_id: str = field(init=False)
    fmt: str = field(init=False)

    def __post_init__(self) -> None:
        c = self.conversation
        self.result = RunResult(c.name, c.shape, self.strategy, self.window, c.agent, c.split)
        self.session_id = f"replay.{c.name}.{c.shape}.{self.strategy}.{self.window}"
        self.fmt = c.shape

    async def run(self) -> RunResult:
        result = self.result
        context: list[Msg] = []
        started = time.perf_counter()
        for message in self.conversation.messages:
            if message.get("role") == "assistant" and context:
                context = await self.before_request(context)
            context.append(message)
        result.messages = len(self.conversation.messages)
        result.wall_seconds = time.perf_counter() - started
        status, counted = await self.service.post(
            "/count", {"messages": context, "format": self.fmt}
        )
        result.final_tokens = int(counted.get("token_count", 0)) if status == 200 else -1
        result.final_valid = not violations_of(context, self.fmt, pending_tail_ok=True)
        result.final_context = context
        truth = extract(self.conversation.messages)
        found = kept(truth, context)
        result.facts = {kind: list(found[kind]) for kind in KINDS}
        first = truth.by_kind["first_request"]
        text = context_text(context)
        result.first_request_kept = bool(first) and first[0] in text
        missing = [f for kind in KINDS for f in truth.by_kind[kind] if f not in text]
        result.missing = len(missing)
        result.recalled = sum([await self.recalled(fact) for fact in missing])
        return result

    async def recalled(self, fact: str) -> bool:
        """Whether recall over the session's archives finds `fact`: one of its hits is an
        archived message holding the fact's text."""
        path = f"/sessions/{self.session_id}/recall"
        status, answer = await self.service.post(
            path, {"query": fact[:RECALL_QUERY_CHARS], "limit": 10}
        )
        if status != 200:
            self.failed(path, status, answer)
            return False
        for hit in answer.get("hits", []):
            archive = await self.service.archive(str(hit["archive_id"]))
            messages = archive.get("messages") or []
            index = int(hit["message_index"])
            if 0 <= index < len(messages) and fact in context_text([messages[index]]):
                return True
        return False

    def failed(self, route: str, status: int, answer: dict[str, Any]) -> None:
        self.result.http_errors += 1
        _sample(self.result.error_samples, f"{route} {status}: {answer}")

    async def before_request(self, context: list[Msg]) -> list[Msg]:
        """The agent's step before a model request: ask, compact when told, count what is
        sent."""
        result = self.result
        result.llm_calls += 1
        body = {"messages": context, "format": self.fmt, "context_window": self.window}
        status, decision = await self.service.post("/should-compact", body)
        if status != 200:
            self.failed("/should-compact", status, decision)
            return context
        sent = int(decision["token_count"])
        if decision["should_compact"]:
            request = {
                "messages": context,
                "format": self.fmt,
                "session_id": self.session_id,
                "force": self.force,
                "options": {"strategy": self.strategy, "context_window": self.window},
            }
            status, answer = await self.service.post("/compact", request)
            if status != 200:
                self.failed("/compact", status, answer)
            elif not answer["compacted"]:
                result.refusals[str(answer.get("reason"))] += 1
            else:
                context = self.compacted(answer)
                body = {"messages": context, "format": self.fmt}
                status, counted = await self.service.post("/count", body)
                if status == 200:
                    if int(counted["token_count"]) >= sent:
                        result.growth += 1
                    sent = int(counted["token_count"])
                else:
                    self.failed("/count", status, counted)
        result.max_sent_tokens = max(result.max_sent_tokens, sent)
        if sent >= self.window:
            result.over_window += 1
        return context

    def compacted(self, answer: dict[str, Any]) -> list[Msg]:
        """Records a compaction and returns the list the agent goes on from."""
        result = self.result
        result.compactions += 1
        last = result.last_compaction_call
        if last is not None and result.llm_calls - last <= REFILL_TURNS:
            result.refills += 1
        result.last_compaction_call = result.llm_calls
        result.answered_by[str(answer.get("strategy"))] += 1
        messages: list[Msg] = list(answer["messages"])
        problems = violations_of(messages, self.fmt)
        if problems:
            result.invalid += 1
            _sample(result.invalid_samples, f"compaction {result.compactions}: {problems[0]}")
        if answer.get("ledger"):
            tokens = self.count_text(
                ledger_section(str(answer.get("summary") or "")) or ledger_text(answer["ledger"])
            )
            result.ledger_tokens_max = max(result.ledger_tokens_max, tokens)
        if answer.get("summary"):
            tokens = self.count_text(answer["summary"])
            result.summary_tokens_max = max(result.summary_tokens_max, tokens)
        if messages and messages[-1].get("role") == "assistant":
            messages.append(dict(CONTINUE))
            result.continuations += 1
        return messages
