"""Agents through the proxy as they send their requests (`tests/proxy/agents.py`).

aider rebuilds each request from its parts: its repository map and the files in the chat,
with their current contents, are live state, not history. One session across its turns,
and the latest files message, as aider sent it, in every request sent.
"""

from __future__ import annotations

from typing import Any

import httpx
import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import ModelSpec
from app.core.summary import ExtractiveSummarizer
from app.proxy.app import ProxyApp, ProxyConfig
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import ProxyPolicy
from app.service.metrics import NoMetrics
from tests.builders import build_service
from tests.proxy.agents import (
    aider_ask,
    aider_files,
    aider_request,
    aider_turn,
)
from tests.proxy.fakes import FakeUpstream, Reply, Sent

pytestmark = pytest.mark.anyio

MODELS = {
    "gpt-small": ModelSpec(context_window=4000, tokenizer="tiktoken", margin=0.0),
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


def _app(upstream: FakeUpstream, tokenizer: TiktokenTokenizer) -> ProxyApp:
    service = build_service(tokenizer, ExtractiveSummarizer(), new_id=_ids())
    compactor = ProxyCompactor(service, service, ProxyPolicy(wait_seconds=0.5))
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
    requests = _aider_turns(20, conventions="Use tabs.\n")
    async with _client(_app(upstream, tokenizer)) as http:
        for messages, _ in requests:
            body = orjson.dumps({"model": "gpt-small", "messages": messages, "max_tokens": 100})
            answer = await http.post("/v1/chat/completions", content=body, headers=OPENAI)
            assert answer.status_code == 200
            sessions.add(answer.headers["x-compact-session"])
            actions.append(answer.headers["x-compact-action"])
    assert len(sessions) == 1
    assert "compacted" in actions
    assert actions[-1] in ("applied", "compacted")
    for sent, (messages, files) in zip(upstream.sent, requests, strict=True):
        got = sent.json["messages"]
        assert isinstance(got, list)
        # The latest files message, its reply, the current request and the reminder end
        # every request as aider sent them; the map and the conventions open it.
        assert got[-4:] == [_files_message(files), *messages[-3:]]
        assert got[:5] == messages[:5]
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
