"""`POST /sessions/{session_id}/recall` through the real ASGI stack."""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.core.errors import RecallDeadlineError
from app.core.recall.search import RecallResult, TimeLeft, check_deadline
from app.core.recall.terms import Query
from app.main import create_app
from app.wiring.service import build_service
from tests.builders import (
    MemoryArchive,
    assistant,
    bulk_round,
    system,
    tool_result,
    tool_use,
    user,
)

pytestmark = pytest.mark.anyio

ERROR = "Traceback (most recent call last):\nKeyError: 'HASDATA_API_KEY'"


def session(secret: str) -> list[dict[str, Any]]:
    call = tool_use("bash", "t1", command="python run.py")
    return [
        system("You are a coding agent."),
        user(f"Set up the {secret} engine."),
        assistant("Running it.", call),
        tool_result("t1", ERROR),
        *bulk_round(),  # enough history that the summary is smaller than what it replaces
        assistant("The key is missing."),
        user("Go on."),
    ]


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "recall_tool.json"
RECALL_TOOLS = json.loads(EXAMPLE.read_text(encoding="utf-8"))


async def compact(
    client: httpx.AsyncClient, session_id: str, secret: str, tools: list[Any] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": session(secret), "force": True, "session_id": session_id}
    if tools is not None:
        body["tools"] = tools
    response = await client.post("/compact", json=body)
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


async def test_recall_returns_the_archived_message(client: httpx.AsyncClient) -> None:
    data = await compact(client, "s-1", "hasdata", [RECALL_TOOLS["anthropic"]])
    assert "POST /sessions/s-1/recall" in data["summary"]
    response = await client.post("/sessions/s-1/recall", json={"query": "KeyError", "limit": 3})
    assert response.status_code == 200
    hits = response.json()["hits"]
    assert hits[0] == {
        "archive_id": data["archive"]["id"],
        "message_index": 2,
        "role": "user",
        "tool_name": "bash",
        "snippet": "Traceback (most recent call last): KeyError: 'HASDATA_API_KEY'",
        "score": 14,
    }


@pytest.mark.parametrize(
    "tools",
    [None, [{"name": "bash", "input_schema": {"type": "object"}}]],
    ids=["no-tools", "other-tools"],
)
async def test_a_summary_names_the_recall_tool_only_when_the_request_defines_it(
    client: httpx.AsyncClient, tools: list[Any] | None
) -> None:
    data = await compact(client, "s-1", "hasdata", tools)
    assert "`recall` tool" not in data["summary"]
    assert "POST /sessions" not in data["summary"]


@pytest.mark.parametrize("shape", ["anthropic", "openai", "responses"])
async def test_the_recall_tool_is_found_in_each_providers_shape(
    client: httpx.AsyncClient, shape: str
) -> None:
    tool = RECALL_TOOLS["anthropic" if shape == "anthropic" else "openai"]
    if shape == "responses":  # the Responses API's function tools are flat
        tool = {"type": "function", **tool["function"]}
    data = await compact(client, "s-1", "hasdata", [tool])
    assert "call the `recall` tool" in data["summary"]


async def test_recall_never_returns_another_sessions_archive(client: httpx.AsyncClient) -> None:
    await compact(client, "s-1", "alpha-secret")
    await compact(client, "s-2", "beta")
    response = await client.post("/sessions/s-2/recall", json={"query": "alpha-secret"})
    assert response.json() == {
        "session_id": "s-2",
        "query": "alpha-secret",
        "hits": [],
        "dropped_terms": [],
        "complete": True,
    }


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/sessions/s;x/recall", {"query": "x"}, "session_id"),
        ("/sessions/s%20x/recall", {"query": "x"}, "session_id"),
        ("/sessions/s-1/recall", {"query": ""}, "query"),
        ("/sessions/s-1/recall", {"query": "x", "limit": 0}, "limit"),
        ("/sessions/s-1/recall", {"query": "x", "limit": 51}, "limit"),
        ("/sessions/s-1/recall", {"query": "x", "extra": 1}, "extra"),
    ],
)
async def test_bad_input_is_a_422_naming_the_field(
    client: httpx.AsyncClient, path: str, body: dict[str, Any], field: str
) -> None:
    response = await client.post(path, json=body)
    assert response.status_code == 422
    assert field in response.text


async def test_recall_needs_the_token_when_one_is_set(client_for: Any) -> None:
    locked: httpx.AsyncClient = await client_for(api_token="tok-recall-secret")
    response = await locked.post("/sessions/s-1/recall", json={"query": "x"})
    assert response.status_code == 401
    allowed = await locked.post(
        "/sessions/s-1/recall",
        json={"query": "x"},
        headers={"authorization": "Bearer tok-recall-secret"},
    )
    assert allowed.status_code == 200


async def test_a_message_archived_by_two_compactions_is_returned_once(
    client: httpx.AsyncClient,
) -> None:
    first = await compact(client, "s-1", "hasdata")
    second = await compact(client, "s-1", "hasdata")
    assert first["archive"]["id"] != second["archive"]["id"]
    response = await client.post("/sessions/s-1/recall", json={"query": "KeyError", "limit": 5})
    hits = response.json()["hits"]
    assert [(h["archive_id"], h["message_index"]) for h in hits] == [(second["archive"]["id"], 2)]


async def test_terms_past_the_64th_are_named_not_searched(client: httpx.AsyncClient) -> None:
    await compact(client, "s-1", "hasdata")
    query = " ".join(f"t{i}" for i in range(64)) + " KeyError zz-top"
    response = await client.post("/sessions/s-1/recall", json={"query": query})
    body = response.json()
    assert (response.status_code, body["hits"], body["dropped_terms"]) == (
        200,
        [],
        ["keyerror", "zz-top"],
    )


class StubbornStore(MemoryArchive):
    """A store whose search works until the recall's deadline stops it, or until it is
    let go; it records how it ended."""

    def __init__(self) -> None:
        super().__init__()
        self.let_go = threading.Event()
        self.ended: list[str] = []
        self.running = threading.Event()

    def search(
        self, session_id: str, query: Query, limit: int, time_left: TimeLeft
    ) -> RecallResult:
        self.running.set()
        try:
            while not self.let_go.wait(0.01):
                check_deadline(time_left)
        except RecallDeadlineError:
            self.ended.append("stopped at the deadline")
            raise
        self.ended.append("let go")
        return RecallResult([])


@pytest.fixture
async def client_over(
    settings_for: Any, tokenizer: Any
) -> AsyncIterator[Callable[..., Awaitable[httpx.AsyncClient]]]:
    managers: list[LifespanManager] = []

    async def make(store: StubbornStore, **overrides: Any) -> httpx.AsyncClient:
        settings = settings_for(**overrides)
        service = build_service(settings, tokenizer)
        service.archive = store
        manager = LifespanManager(create_app(settings, service=service))
        await manager.__aenter__()
        managers.append(manager)
        transport = httpx.ASGITransport(app=manager.app)
        return httpx.AsyncClient(transport=transport, base_url="http://compact.test")

    yield make
    for manager in managers:
        await manager.__aexit__(None, None, None)


@pytest.mark.slow
async def test_a_recall_past_its_deadline_answers_504_and_stops_its_work(
    client_over: Any,
) -> None:
    store = StubbornStore()
    client = await client_over(store, request_timeout=0.4)
    started = time.monotonic()
    response = await client.post("/sessions/s-1/recall", json={"query": "anything"})
    took = time.monotonic() - started
    assert response.status_code == 504
    assert response.json()["error"] == "deadline_exceeded"
    assert store.ended == ["stopped at the deadline"]  # the work ended before the answer
    assert 0.4 <= took < 1.5


async def test_recalls_past_the_slots_answer_503_busy(client_over: Any) -> None:
    store = StubbornStore()
    client = await client_over(store, recall_slots=1, recall_slot_wait=0.05)
    async with anyio.create_task_group() as tasks:
        answers: list[int] = []

        async def first() -> None:
            answer = await client.post("/sessions/s-1/recall", json={"query": "a"})
            answers.append(answer.status_code)

        tasks.start_soon(first)
        await anyio.to_thread.run_sync(store.running.wait, 5.0)
        busy = await client.post("/sessions/s-1/recall", json={"query": "b"})
        store.let_go.set()
    assert busy.status_code == 503
    assert (busy.json()["error"], busy.headers["retry-after"]) == ("busy", "1")
    assert "all 1 recall slots are busy" in busy.json()["message"]
    assert answers == [200]
    assert store.ended == ["let go"]


async def test_a_running_recall_takes_none_of_the_threads_count_runs_on(
    client_over: Any,
) -> None:
    store = StubbornStore()
    client = await client_over(store, recall_slots=1)
    shared = anyio.to_thread.current_default_thread_limiter()
    tokens = shared.total_tokens
    shared.total_tokens = 1  # one thread for every other route: a recall on it would block
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(
                functools.partial(client.post, "/sessions/s-1/recall", json={"query": "a"})
            )
            try:
                with anyio.fail_after(5):
                    # Polled: waiting in a thread would take the one shared thread.
                    while not store.running.is_set():  # noqa: ASYNC110
                        await anyio.sleep(0.01)
                    count = await client.post("/count", json={"messages": [user("hi")]})
                assert store.ended == []  # the recall is still running
            finally:
                store.let_go.set()
    finally:
        shared.total_tokens = tokens
    assert count.status_code == 200
    assert store.ended == ["let go"]
