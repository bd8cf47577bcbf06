"""Property: every strategy, on any valid history (one message to one huge tool exchange,
both shapes, with and without `force` and fallbacks, small and large windows, a summarizer
that works or fails) answers 200, and leaves exactly the archive of the compaction it
returned (holding every message it replaced, at least one) or none at all."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from anyio.from_thread import start_blocking_portal
from asgi_lifespan import LifespanManager
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from app.main import create_app
from app.service.registry import STRATEGIES
from app.settings import Settings
from app.wiring.service import build_service
from tests.builders import FakeSummarizer

Event = tuple[str, ...]
Post = Callable[[dict[str, Any], bool], httpx.Response]

# Words per tool result: a line, a page, a file, a large file (~2 tokens a word).
RESULT_WORDS = (1, 40, 600, 3000, 9000)


@cache
def text(words: int, tag: str = "v") -> str:
    return " ".join(f"{tag}{i}" for i in range(words))


@st.composite
def one_exchange(draw: st.DrawFn) -> list[Event]:
    """An agent's first action: a request, one tool call, its (often large) result."""
    events: list[Event] = [("system", "You are a coding agent.")] if draw(st.booleans()) else []
    size = draw(st.sampled_from(RESULT_WORDS))
    return [*events, ("user", "Read the file."), ("call", "c1"), ("result", "c1", text(size))]


@st.composite
def histories(draw: st.DrawFn) -> list[Event]:
    """Events in order: a system prompt (maybe), then rounds of a request, tool exchanges
    and a closing answer; only the last round may end without one (on its results, as an
    agent's history does between calls). At least one message."""
    events: list[Event] = []
    if draw(st.booleans()):
        events.append(("system", "You are a coding agent."))
    rounds = draw(st.integers(1, 4))
    calls = 0
    for number in range(rounds):
        events.append(("user", f"Task {number}: " + text(draw(st.sampled_from((2, 60))), "t")))
        for _ in range(draw(st.integers(0, 3))):
            calls += 1
            size = draw(st.sampled_from(RESULT_WORDS))
            events += [("call", f"c{calls}"), ("result", f"c{calls}", text(size))]
        if number < rounds - 1 or draw(st.booleans()):
            events.append(("answer", f"Done {number}."))
    return events


def anthropic(events: list[Event]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, *rest in events:
        if kind in ("system", "user"):
            out.append({"role": kind, "content": rest[0]})
        elif kind == "call":
            call = {"type": "tool_use", "id": rest[0], "name": "read_file", "input": {"path": "a"}}
            out.append({"role": "assistant", "content": [{"type": "text", "text": "Go."}, call]})
        elif kind == "result":
            block = {"type": "tool_result", "tool_use_id": rest[0], "content": rest[1]}
            out.append({"role": "user", "content": [block]})
        else:
            out.append({"role": "assistant", "content": [{"type": "text", "text": rest[0]}]})
    return out


def openai(events: list[Event]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, *rest in events:
        if kind in ("system", "user"):
            out.append({"role": kind, "content": rest[0]})
        elif kind == "call":
            function = {"name": "read_file", "arguments": '{"path": "a"}'}
            call = {"id": rest[0], "type": "function", "function": function}
            out.append({"role": "assistant", "content": "Go.", "tool_calls": [call]})
        elif kind == "result":
            out.append({"role": "tool", "tool_call_id": rest[0], "content": rest[1]})
        else:
            out.append({"role": "assistant", "content": rest[0]})
    return out


def failing(request: SummaryRequest) -> str:
    raise SummarizerError("HTTP 503 after 3 attempts", retryable=True)


@pytest.fixture
def post(tmp_path: Path, tokenizer: TiktokenTokenizer) -> Iterator[Post]:
    """POST /compact in-process over the real ASGI stack, from synchronous code (what
    hypothesis drives): a 500 comes back as a response, not as the app's exception. The
    second argument swaps in a summarizer that fails for that one request."""
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        workdir=str(tmp_path),
        data_dir=str(tmp_path / "data"),
        summarizer="extractive",
    )
    service = build_service(settings, tokenizer)
    working = service.summarizer

    async def started() -> LifespanManager:
        manager = LifespanManager(create_app(settings, service=service))
        await manager.__aenter__()
        return manager

    with start_blocking_portal() as portal:
        manager = portal.call(started)
        transport = httpx.ASGITransport(app=manager.app, raise_app_exceptions=False)
        client = httpx.AsyncClient(transport=transport, base_url="http://compact.test")

        def send(body: dict[str, Any], summary_fails: bool) -> httpx.Response:
            service.summarizer = FakeSummarizer(failing) if summary_fails else working
            return portal.call(lambda: client.post("/compact", json=body))

        yield send
        portal.call(client.aclose)
        portal.call(manager.__aexit__, None, None, None)


def archives(data_dir: Path) -> dict[str, dict[str, Any]]:
    directory = data_dir / "archives"
    files = sorted(directory.glob("*.json")) if directory.exists() else []
    return {p.stem: json.loads(gzip.decompress(p.read_bytes())) for p in files}


@pytest.mark.slow
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    events=st.one_of(one_exchange(), histories()),
    shape=st.sampled_from(("anthropic", "openai")),
    strategy=st.sampled_from(tuple(STRATEGIES)),
    fallback=st.booleans(),
    # Weighted to compact more often than not: that is where archives are written.
    force=st.sampled_from((True, True, False)),
    window=st.sampled_from((4000, 8000, 16000, 32000, 200000)),
    summary_fails=st.sampled_from((False, False, False, True)),
)
def test_any_history_gets_an_answer_and_only_the_archive_of_a_kept_compaction(
    post: Post,
    tmp_path: Path,
    events: list[Event],
    shape: str,
    strategy: str,
    fallback: bool,
    force: bool,
    window: int,
    summary_fails: bool,
) -> None:
    messages = anthropic(events) if shape == "anthropic" else openai(events)
    options = {"strategy": strategy, "fallback": fallback, "context_window": window}
    before = archives(tmp_path / "data")
    answer = post({"messages": messages, "force": force, "options": options}, summary_fails)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    event(f"{strategy} answered by {data['strategy']}: {data['reason'] or 'compacted'}")
    after = archives(tmp_path / "data")
    assert before.items() <= after.items()  # nothing earlier removed or changed
    new = {k: v for k, v in after.items() if k not in before}
    if not data["compacted"]:
        assert (data["archive"], new) == (None, {})
        assert data["messages"] == messages
        return
    archive = data["archive"]
    assert list(new) == [archive["id"]]
    stored = new[archive["id"]]["messages"]
    assert len(stored) == archive["message_count"] >= 1
    # Every message it replaced is in the archive (`selective` archives all it may cut).
    assert archive["message_count"] >= data["stats"]["compacted_message_count"] >= 1
