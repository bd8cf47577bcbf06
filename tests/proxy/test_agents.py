"""Agents through the proxy as they send their requests (`tests/proxy/agents.py`).

aider rebuilds each request from its parts: its repository map and the files in the chat,
with their current contents, are live state, not history. One session across its turns,
and the latest files message, as aider sent it, in every request sent. The project rules
an agent sends in its messages (Claude Code's CLAUDE.md reminder, Codex's AGENTS.md
message) reach the model verbatim in every request after a compaction, pinned or not.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import ModelSpec
from app.core.proxy.splice import breakpoints
from app.core.summary import ExtractiveSummarizer
from app.proxy.app import ProxyApp, ProxyConfig
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import ProxyPolicy
from app.service.metrics import NoMetrics
from tests.builders import assistant, build_service, tool_result, tool_use
from tests.proxy.agents import (
    CLAUDE_MD,
    FILES_REPLY,
    REPO_REPLY,
    aider_ask,
    aider_files,
    aider_request,
    aider_turn,
    claude_code_first,
)
from tests.proxy.fakes import FakeUpstream, Reply, Sent
from tests.proxy.heads import pinned

pytestmark = pytest.mark.anyio

MODELS = {
    "gpt-small": ModelSpec(context_window=4000, tokenizer="tiktoken", margin=0.0),
    "claude-small": ModelSpec(context_window=8000, tokenizer="tiktoken", margin=0.0),
}
CONFIG = ProxyConfig(
    anthropic_url="https://anthropic.example",
    openai_url="https://openai.example",
    upstreams={},
    secret=b"k" * 32,
)
OPENAI = {"authorization": "Bearer sk-test"}


def _ids() -> Any:
    count = iter(range(1, 10_000))
    return lambda: f"arch-{next(count)}"


def _app(
    upstream: FakeUpstream, tokenizer: TiktokenTokenizer, policy: ProxyPolicy | None = None
) -> ProxyApp:
    service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    compactor = ProxyCompactor(service, service, policy or ProxyPolicy(wait_seconds=0.5))
    return ProxyApp(CONFIG, upstream, compactor, MODELS, NoMetrics())


def _client(app: ProxyApp) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://proxy")


def _parser(lines: int) -> str:
    return "".join(f"value_{n} = compute({n})\n" for n in range(lines))


def _aider_turns(
    turns: int, conventions: str | None = None
) -> list[tuple[list[dict[str, Any]], dict[str, str]]]:
    """Each of aider's requests over `turns` turns, with the files in the chat then: one
    file it edits every turn (so its content grows), a map that follows the request."""
    done: list[dict[str, Any]] = []
    requests = []
    for i in range(1, turns + 1):
        files = {"parser.py": _parser(20 + 4 * i)}
        repo_map = f"\nsrc/lexer.py:\n│def tokens_{i}(text):\n│class Lexer:\n"
        requests.append((aider_request(done, [aider_ask(i)], files, repo_map, conventions), files))
        done = [*done, *aider_turn(i, 12)]
    return requests


def _files_message(files: dict[str, str]) -> dict[str, Any]:
    return {"role": "user", "content": aider_files(files)}


async def test_aider_keeps_one_session_and_its_latest_files_in_every_request(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream()
    sessions, actions = set(), []
    requests = _aider_turns(20)
    async with _client(_app(upstream, tokenizer)) as http:
        for messages, _ in requests:
            body = orjson.dumps({"model": "gpt-small", "messages": messages, "max_tokens": 100})
            answer = await http.post("/v1/chat/completions", content=body, headers=OPENAI)
            assert answer.status_code == 200
            sessions.add(answer.headers["x-compact-session"])
            actions.append(answer.headers["x-compact-action"])
    assert len(sessions) == 1
    assert actions[-1] in ("applied", "compacted")
    for sent, (messages, files) in zip(upstream.sent, requests, strict=True):
        got = sent.json["messages"]
        assert isinstance(got, list)
        # The latest files message, its reply, the current request and the reminder end
        # every request as aider sent them; the map opens it.
        assert got[-4:] == [_files_message(files), *messages[-3:]]
        assert got[:3] == messages[:3]
    # Compacted: the history between them was summarized.
    assert len(upstream.sent[-1].json["messages"]) < len(requests[-1][0])  # type: ignore[arg-type]


def _too_long_over(tokens: int, tokenizer: TiktokenTokenizer) -> Any:
    """A provider that counts more than we do: a context-length error past `tokens` of
    the sent messages (in our count), naming that limit."""
    error = orjson.dumps(
        {
            "error": {
                "message": f"This model's maximum context length is {tokens + 100} tokens.",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        }
    )

    def answer(sent: Sent) -> Reply:
        count = tokenizer.count(orjson.dumps(sent.json["messages"]).decode())
        if count > tokens:
            return Reply(400, [(b"content-type", b"application/json")], (error,))
        return Reply()

    return answer


async def test_an_aider_request_retried_smaller_still_sends_the_files_as_they_are(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream(_too_long_over(2000, tokenizer))
    messages, files = _aider_turns(9)[-1]
    body = orjson.dumps({"model": "gpt-small", "messages": messages, "max_tokens": 100})
    async with _client(_app(upstream, tokenizer)) as http:
        answer = await http.post("/v1/chat/completions", content=body, headers=OPENAI)
    assert answer.status_code == 200
    assert answer.headers["x-compact-action"] == "retried"
    sent = upstream.sent[-1].json["messages"]
    assert isinstance(sent, list)
    assert sent[-4:] == [_files_message(files), *messages[-3:]]
    assert sent[:3] == messages[:3]


ANTHROPIC = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}
TOOLS = [
    {
        "name": name,
        "description": f"The {name} tool. " * 40,
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
    for name in ("Bash", "Read", "Edit", "Grep")
]


def _system(repeat: int) -> list[dict[str, Any]]:
    """Claude Code's system prompt, `repeat` sentences long (about 7 tokens each)."""
    return [
        {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
        {"type": "text", "text": "You are an interactive CLI tool. " * repeat},
    ]


def _texts(sent: Sent) -> str:
    """Every text the model reads in `sent`'s messages, one after another."""
    out = []
    for message in sent.json["messages"]:  # type: ignore[union-attr]
        content = message["content"]
        blocks = [{"text": content}] if isinstance(content, str) else content
        out += [b["text"] for b in blocks if isinstance(b.get("text"), str)]
    return "\n".join(out)


def _claude_code(turns: int) -> list[list[dict[str, Any]]]:
    """The messages of each of a Claude Code session's requests: the first user message
    with CLAUDE.md, then a command and its output a turn."""
    history = [claude_code_first("Fix the build of the parser.")]
    requests = []
    for i in range(1, turns + 1):
        history = [
            *history,
            assistant(f"Running {i}.", tool_use("Bash", f"t{i}", command=f"make {i}")),
            tool_result(f"t{i}", "line of tool output\n" * 30),
        ]
        requests.append(history)
    return requests


async def _run_claude_code(
    upstream: FakeUpstream,
    tokenizer: TiktokenTokenizer,
    policy: ProxyPolicy,
    requests: list[list[dict[str, Any]]],
    system: list[dict[str, Any]],
) -> list[str]:
    headers = {**ANTHROPIC, "x-claude-code-session-id": "cc-1"}
    actions = []
    async with _client(_app(upstream, tokenizer, policy)) as http:
        for messages in requests:
            body = {"model": "claude-small", "max_tokens": 100, "system": system}
            content = orjson.dumps({**body, "tools": TOOLS, "messages": messages})
            answer = await http.post("/v1/messages", content=content, headers=headers)
            assert answer.status_code == 200
            actions.append(answer.headers["x-compact-action"])
    return actions


async def test_claude_code_s_rules_reach_the_model_after_every_compaction_pinned_or_not(
    tokenizer: TiktokenTokenizer,
) -> None:
    """Nothing pinned, every later compaction summarizing the earlier head again: the
    CLAUDE.md reminder is carried, verbatim, into each head."""
    upstream = FakeUpstream()
    policy = ProxyPolicy(wait_seconds=0.5, pin_share=0.0, fold_share=0.0)
    requests = _claude_code(40)
    actions = await _run_claude_code(upstream, tokenizer, policy, requests, _system(150))
    assert actions.count("compacted") + actions.count("applied") >= 10
    assert len(upstream.sent) == len(requests)
    for sent in upstream.sent:
        assert CLAUDE_MD in _texts(sent)
        assert _texts(sent).count("# claudeMd") == 1
    last = upstream.sent[-1].json["messages"]
    assert isinstance(last, list)
    assert pinned(last, requests[-1]) == 0
    # The reminder opens the summary turn, as Claude Code sent it.
    assert last[0]["content"][0] == requests[0][0]["content"][0]
    assert "[Conversation compressed]" in last[0]["content"][1]["text"]


async def test_a_short_first_message_stays_pinned_when_system_and_tools_crowd_the_window(
    tokenizer: TiktokenTokenizer,
) -> None:
    """The system prompt and tools take close to half the limit: the pin's budget is
    gone, yet the first message (its CLAUDE.md and a short request) is kept as sent,
    not summarized into as many tokens."""
    upstream = FakeUpstream()
    requests = _claude_code(30)
    policy = ProxyPolicy(wait_seconds=0.5)
    actions = await _run_claude_code(upstream, tokenizer, policy, requests, _system(400))
    assert "applied" in actions
    for sent, messages in zip(upstream.sent, requests, strict=True):
        got = sent.json["messages"]
        assert isinstance(got, list)
        assert got[0] == messages[0]


async def test_a_retry_that_summarizes_the_first_message_carries_its_rules(
    tokenizer: TiktokenTokenizer,
) -> None:
    upstream = FakeUpstream(_too_long_over(2500, tokenizer))
    requests = _claude_code(24)[-1:]
    policy = ProxyPolicy(wait_seconds=0.5, pin_share=0.0)
    actions = await _run_claude_code(upstream, tokenizer, policy, requests, _system(150))
    assert actions == ["retried"]
    last = upstream.sent[-1].json["messages"]
    assert isinstance(last, list)
    assert pinned(last, requests[-1]) == 0
    assert CLAUDE_MD in _texts(upstream.sent[-1])


AGENTS_MD = (
    "# AGENTS.md instructions for /home/dev/proj\n\n<INSTRUCTIONS>\n"
    "Run `cargo test` before you finish.\n</INSTRUCTIONS>"
)
ENVIRONMENT = (
    "<environment_context>\n  <cwd>/home/dev/proj</cwd>\n  <shell>bash</shell>\n"
    "</environment_context>"
)


async def test_codex_s_agents_md_message_reaches_the_model_after_a_compaction(
    tokenizer: TiktokenTokenizer,
) -> None:
    """Codex's AGENTS.md and environment messages, as its Chat Completions requests carry
    them ahead of the user's first request; nothing pinned."""
    upstream = FakeUpstream()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are Codex, a coding agent."},
        {"role": "user", "content": AGENTS_MD},
        {"role": "user", "content": ENVIRONMENT},
        {"role": "user", "content": "Fix the failing test."},
    ]
    for i in range(1, 16):
        call = {"name": "shell", "arguments": orjson.dumps({"command": ["make", str(i)]}).decode()}
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"c{i}", "type": "function", "function": call}],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": "line of output\n" * 60},
        ]
    body = orjson.dumps({"model": "gpt-small", "messages": messages, "max_tokens": 100})
    policy = ProxyPolicy(wait_seconds=0.5, pin_share=0.0)
    async with _client(_app(upstream, tokenizer, policy)) as http:
        answer = await http.post("/v1/chat/completions", content=body, headers=OPENAI)
    assert answer.headers["x-compact-action"] == "compacted"
    sent = upstream.sent[-1].json["messages"]
    assert isinstance(sent, list)
    assert sent[0] == messages[0]
    assert sent[1]["content"][:2] == [
        {"type": "text", "text": AGENTS_MD},
        {"type": "text", "text": ENVIRONMENT},
    ]
    assert "[Conversation compressed]" in sent[1]["content"][2]["text"]


def _assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    """aider's `add_cache_control`: the message's text as a block with a breakpoint."""
    block = {"type": "text", "text": message["content"], "cache_control": {"type": "ephemeral"}}
    return {**message, "content": [block]}


def _aider_anthropic(messages: list[dict[str, Any]]) -> bytes:
    """aider's request as litellm sends it to Anthropic: every system message in `system`,
    breakpoints at the end of the system prompt, the repository map and the files pair."""
    system = [m["content"] for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    ends = [i for i, m in enumerate(rest) if m["content"] in (REPO_REPLY, FILES_REPLY)]
    rest = [_marked(m) if i in ends else m for i, m in enumerate(rest)]
    blocks = [{"type": "text", "text": text} for text in system]
    blocks[0]["cache_control"] = {"type": "ephemeral"}
    body = {"model": "claude-small", "max_tokens": 100, "system": blocks, "messages": rest}
    return orjson.dumps(body)


async def test_aider_through_anthropic_keeps_its_breakpoints_and_one_on_the_head(
    tokenizer: TiktokenTokenizer,
) -> None:
    """Its own three breakpoints (system, map, files) and the head's make the four a
    request may set; the files pair goes as aider marked it, its conventions file (a
    read-only file) opens every request as sent."""
    upstream = FakeUpstream()
    sessions, actions = set(), []
    requests = _aider_turns(40, conventions="Indent with tabs.\n")
    async with _client(_app(upstream, tokenizer)) as http:
        for messages, _ in requests:
            body = _aider_anthropic(messages)
            answer = await http.post("/v1/messages", content=body, headers=ANTHROPIC)
            assert answer.status_code == 200
            sessions.add(answer.headers["x-compact-session"])
            actions.append(answer.headers["x-compact-action"])
    assert len(sessions) == 1
    assert actions[-1] in ("applied", "compacted")
    for sent, (messages, files) in zip(upstream.sent, requests, strict=True):
        got = sent.json["messages"]
        assert isinstance(got, list)
        assert got[-3:-1] == [_files_message(files), _marked(_assistant(FILES_REPLY))]
        assert got[:2] == [messages[1], messages[2]]  # the conventions pair
    last = upstream.sent[-1].json
    assert breakpoints(last) == 4
