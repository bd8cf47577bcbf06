"""The client against the running app: async in-process over ASGI, sync over a real
loopback server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from app.adapters.tokenizer import TiktokenTokenizer
from app.api.schemas import CountResponse, ErrorDetail, HealthResponse
from app.client import (
    AsyncContextCompactClient,
    CompactResponse,
    ContextCompactClient,
    ContextCompactError,
)
from app.core.compaction import CompactOptions
from app.core.ports import Summarizer, SummaryRequest
from app.main import build_service, create_app
from app.settings import Settings
from tests.builders import FakeSummarizer, assistant, read_round, system, user
from tests.live_server import serve_in_thread

CONVERSATION = [
    system("You are a coding agent."),
    user("Fix the bug in src/app.py."),
    *read_round("src/app.py", "def f(:"),
    assistant("Fixed it."),
]
OPENAI_CONVERSATION = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Read it."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "src/app.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "def f(): ..."},
    {"role": "assistant", "content": "Done."},
]


@pytest.fixture
def app_for(tmp_path: Path, tokenizer: TiktokenTokenizer) -> Callable[..., FastAPI]:
    def make(summarizer: Summarizer | None = None, **overrides: Any) -> FastAPI:
        workdir = tmp_path / "workspace"
        (workdir / "src").mkdir(parents=True, exist_ok=True)
        (workdir / "src" / "app.py").write_text("def f():\n    return 1\n")
        values = {
            "workdir": str(workdir),
            "data_dir": str(tmp_path / "data"),
            "summarizer": "extractive",
            **overrides,
        }
        settings = Settings(_env_file=None, **values)  # type: ignore[call-arg]
        return create_app(settings, service=build_service(settings, tokenizer, summarizer))

    return make


@pytest.fixture
async def aclient(app_for: Callable[..., FastAPI]) -> AsyncIterator[AsyncContextCompactClient]:
    async with LifespanManager(app_for()) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with AsyncContextCompactClient("http://compact.test", transport=transport) as c:
            yield c


@pytest.fixture
def sync_client(app_for: Callable[..., FastAPI]) -> Iterator[ContextCompactClient]:
    with serve_in_thread(app_for()) as url, ContextCompactClient(url, timeout=30) as client:
        yield client


@pytest.mark.anyio
async def test_async_compact_then_fetch_the_archive(aclient: AsyncContextCompactClient) -> None:
    result = await aclient.compact(CONVERSATION, force=True, session_id="s-1")
    assert isinstance(result, CompactResponse)
    assert (result.compacted, result.summarizer, result.format) == (True, "extractive", "anthropic")
    assert result.messages[0] == CONVERSATION[0]
    assert result.messages[-2:] == [
        {
            "role": "user",
            "content": "[Restored after compact] src/app.py:\ndef f():\n    return 1\n",
        },
        {"role": "assistant", "content": "Noted, file content restored."},
    ]
    assert result.archive is not None
    archive = await aclient.get_archive(result.archive.id)
    assert (archive.session_id, archive.messages) == ("s-1", CONVERSATION[1:])
    recalled = await aclient.recall("s-1", "src/app.py", limit=1)
    assert [(h.archive_id, h.tool_name) for h in recalled.hits] == [
        (result.archive.id, "read_file")
    ]
    assert (await aclient.recall("s-2", "src/app.py")).hits == []


@pytest.mark.anyio
async def test_async_count_and_should_compact_answer_the_api_models(
    aclient: AsyncContextCompactClient,
) -> None:
    counted = await aclient.count(CONVERSATION)
    assert counted == CountResponse(
        token_count=counted.token_count,
        message_count=5,
        tokenizer="tiktoken",
        exact=True,
        format="anthropic",
        warnings=[],
    )
    decision = await aclient.should_compact(
        CONVERSATION, last_usage={"input_tokens": 8500}, context_window=10_000
    )
    assert (decision.should_compact, decision.reason, decision.token_count) == (
        True,
        "above_threshold",
        8500,
    )
    assert decision.token_source == "last_usage"


@pytest.mark.anyio
async def test_openai_messages_come_back_as_openai_dicts(
    aclient: AsyncContextCompactClient,
) -> None:
    result = await aclient.compact(
        OPENAI_CONVERSATION, force=True, options=CompactOptions(max_restore_files=0)
    )
    assert (result.compacted, result.format) == (True, "openai")
    assert result.messages[0] == OPENAI_CONVERSATION[0]
    assert [m["role"] for m in result.messages] == ["system", "user", "assistant"]
    assert result.restored_files == []


@pytest.mark.anyio
async def test_api_errors_are_raised_with_status_code_and_fields(
    aclient: AsyncContextCompactClient,
) -> None:
    with pytest.raises(ContextCompactError) as bad:
        await aclient.count([user("hi"), {"role": "robot", "content": "x"}])
    assert (bad.value.status, bad.value.code) == (422, "invalid_request")
    assert bad.value.details == [
        ErrorDetail(
            field="messages[1].role", message="Input should be 'system', 'user' or 'assistant'"
        )
    ]
    with pytest.raises(ContextCompactError) as missing:
        await aclient.get_archive("00001763850000000000-a1b2c3d4e5f6")
    assert (missing.value.status, missing.value.code) == (404, "not_found")
    assert str(missing.value) == ("404 not_found: no archive 00001763850000000000-a1b2c3d4e5f6")


@pytest.mark.anyio
async def test_a_background_compaction_is_started_polled_and_applied(
    aclient: AsyncContextCompactClient,
) -> None:
    job = await aclient.start_compaction(CONVERSATION, force=True, session_id="s-2")
    assert job.state in ("queued", "running", "done")
    for _ in range(200):  # bounded: the extractive compaction takes milliseconds
        job = await aclient.get_compaction(job.id)
        if job.state == "done":
            break
        await anyio.sleep(0.01)
    assert job.result is not None
    assert job.result.compacted
    later = [*CONVERSATION, user("And now the tests.")]
    applied = await aclient.apply_compaction(job.id, later)
    assert applied.messages == [*job.result.messages, user("And now the tests.")]
    assert (applied.replaced_message_count, applied.kept_message_count) == (5, 1)


@pytest.mark.anyio
async def test_a_second_job_of_a_busy_session_is_refused_and_the_first_can_be_cancelled(
    app_for: Callable[..., FastAPI],
) -> None:
    never = anyio.Event()

    async def blocked(request: SummaryRequest) -> str:
        await never.wait()
        return "unreachable"

    app = app_for(summarizer=FakeSummarizer(blocked))
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with AsyncContextCompactClient("http://t", transport=transport) as client:
            first = await client.start_compaction(CONVERSATION, force=True, session_id="s-3")
            with pytest.raises(ContextCompactError) as busy:
                await client.start_compaction(CONVERSATION, force=True, session_id="s-3")
            cancelled = await client.cancel_compaction(first.id)
            again = await client.get_compaction(first.id)
    assert (busy.value.status, busy.value.code) == (409, "session_busy")
    assert busy.value.details == [ErrorDetail(field="session_id", message=busy.value.message)]
    assert (cancelled.id, cancelled.state, again.state) == (first.id, "cancelled", "cancelled")


def test_sync_client_against_a_real_server(sync_client: ContextCompactClient) -> None:
    assert sync_client.healthz() == HealthResponse(status="ok")
    ready = sync_client.readyz()
    assert (ready.ready, ready.checks["data_dir_writable"]) == (True, True)
    counted = sync_client.count(CONVERSATION)
    result = sync_client.compact(CONVERSATION, force=True)
    assert result.compacted is True
    assert result.token_count == counted.token_count
    assert result.archive is not None
    assert sync_client.get_archive(result.archive.id).messages == CONVERSATION[1:]


def test_a_token_is_sent_as_a_bearer_header() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"status": "ok"})

    with ContextCompactClient(
        "http://compact.test", token="s3cret", transport=httpx.MockTransport(answer)
    ) as client:
        client.healthz()
    assert seen[0].headers["authorization"] == "Bearer s3cret"


def test_no_server_is_an_unreachable_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with (
        ContextCompactClient("http://compact.test", transport=httpx.MockTransport(refuse)) as c,
        pytest.raises(ContextCompactError) as failed,
    ):
        c.healthz()
    assert (failed.value.status, failed.value.code, failed.value.message) == (
        None,
        "unreachable",
        "connection refused",
    )


def test_an_error_without_a_json_body_keeps_its_text() -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(502, text="Bad Gateway"))
    with (
        ContextCompactClient("http://compact.test", transport=transport) as c,
        pytest.raises(ContextCompactError) as failed,
    ):
        c.count([user("hi")])
    assert (failed.value.status, failed.value.code, failed.value.message) == (
        502,
        "http_error",
        "Bad Gateway",
    )


def test_a_cancel_answered_202_by_another_replica_is_the_job_with_cancel_requested() -> None:
    job = {
        "id": "job-1",
        "session_id": None,
        "state": "running",
        "format": "anthropic",
        "created_at": "2026-11-22T22:00:00+00:00",
        "finished_at": None,
        "sent_count": 3,
        "sent_sha256": "0" * 64,
        "owner": "replica-a",
        "heartbeat_at": "2026-11-22T22:00:10+00:00",
        "cancel_requested": True,
    }
    transport = httpx.MockTransport(lambda r: httpx.Response(202, json=job))
    with ContextCompactClient("http://compact.test", transport=transport) as c:
        cancelled = c.cancel_compaction("job-1")
    assert (cancelled.state, cancelled.owner, cancelled.cancel_requested) == (
        "running",
        "replica-a",
        True,
    )
