"""The client package (clients/python, `context_compact_client`) against the real app:
async in-process over ASGI, sync over a real loopback server."""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import subprocess
import sys
import tomllib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, is_typeddict

import anyio
import httpx
import pytest
from asgi_lifespan import LifespanManager
from context_compact_client import (
    AsyncContextCompactClient,
    ConflictError,
    ConnectionFailedError,
    ContextCompactClient,
    ContextCompactError,
    InvalidRequestError,
    NotFoundError,
    ServiceError,
    UnauthorizedError,
    UnavailableError,
    UnexpectedResponseError,
    types,
)
from fastapi import FastAPI

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.ports import Summarizer, SummaryRequest
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service
from tests.builders import (
    BULK_OUTPUT,
    FakeSummarizer,
    assistant,
    bulk_round,
    read_round,
    system,
    user,
)
from tests.live_server import serve_in_thread
from tests.sdk_bodies import body as sdk_body
from tests.spec import load_spec

CONVERSATION = [
    system("You are a coding agent."),
    user("Fix the bug in src/app.py."),
    *bulk_round(),
    *read_round("src/app.py", "def f(:"),
    assistant("Fixed it."),
]
OPENAI_CONVERSATION = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Read it."},
    {
        "role": "assistant",
        "content": "Testing first.",
        "tool_calls": [
            {"id": "b1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "b1", "content": BULK_OUTPUT},
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
    assert (result["compacted"], result["summarizer"], result["format"]) == (
        True,
        "extractive",
        "anthropic",
    )
    assert result["messages"][0] == CONVERSATION[0]
    assert result["messages"][-2:] == [
        {
            "role": "user",
            "content": "[Restored after compact] src/app.py:\ndef f():\n    return 1\n",
        },
        {"role": "assistant", "content": "Noted, file content restored."},
    ]
    archive_info = result.get("archive")
    assert archive_info is not None
    archive = await aclient.get_archive(archive_info["id"])
    assert (archive["session_id"], archive["messages"]) == ("s-1", CONVERSATION[1:])
    recalled = await aclient.recall("s-1", "src/app.py", limit=2)
    assert [(h["archive_id"], h.get("tool_name")) for h in recalled["hits"]] == [
        (archive_info["id"], None),  # the request naming it: the shorter message
        (archive_info["id"], "read_file"),
    ]
    assert (await aclient.recall("s-2", "src/app.py"))["hits"] == []


@pytest.mark.anyio
async def test_async_count_and_should_compact_answer_the_api_json(
    aclient: AsyncContextCompactClient,
) -> None:
    counted = await aclient.count(CONVERSATION)
    assert counted == {
        "token_count": counted["token_count"],
        "message_count": 7,
        "tokenizer": "tiktoken",
        "exact": True,
        "format": "anthropic",
        "warnings": [],
        "parts": {"system": 11, "tools": 0, "messages": counted["token_count"] - 11},
    }
    decision = await aclient.should_compact(
        CONVERSATION, last_usage={"input_tokens": 8500}, context_window=10_000
    )
    assert (decision["should_compact"], decision["reason"], decision["token_count"]) == (
        True,
        "above_threshold",
        8500,
    )
    assert decision["token_source"] == "last_usage"


@pytest.mark.anyio
async def test_a_provider_request_s_own_fields_are_counted_and_handed_back(
    aclient: AsyncContextCompactClient,
) -> None:
    """`model`, Anthropic's top-level `system` and `tools` go as the SDK sends them: the
    model gives the window, the tools are counted, the request comes back ready to send."""
    tools = [{"name": "read_file", "description": "Read a file.", "input_schema": {}}]
    messages = CONVERSATION[1:]
    counted = await aclient.count(
        messages, model="claude-sonnet-4-5", system="You are a coding agent.", tools=tools
    )
    parts = counted.get("parts")
    assert parts is not None
    assert parts["tools"] > 0
    assert parts["system"] > 0
    assert counted["exact"] is False  # Claude: cl100k plus a margin
    decision = await aclient.should_compact(
        messages, model="claude-sonnet-4-5", system="You are a coding agent.", tools=tools
    )
    assert decision["context_window"] == 200_000
    done = await aclient.compact(
        messages,
        model="claude-sonnet-4-5",
        system="You are a coding agent.",
        tools=tools,
        force=True,
        options={"max_restore_files": 0},
    )
    request = done.get("request")
    assert request is not None
    assert (request["model"], request["system"], request["tools"]) == (
        "claude-sonnet-4-5",
        "You are a coding agent.",
        tools,
    )
    continued = {"role": "user", "content": "Continue."}  # after the acknowledgement
    assert request["messages"] == [*done["messages"], continued]


@pytest.mark.anyio
async def test_openai_messages_come_back_as_openai_dicts(
    aclient: AsyncContextCompactClient,
) -> None:
    result = await aclient.compact(
        OPENAI_CONVERSATION, force=True, options={"max_restore_files": 0}
    )
    assert (result["compacted"], result["format"]) == (True, "openai")
    assert result["messages"][0] == OPENAI_CONVERSATION[0]
    assert [m["role"] for m in result["messages"]] == ["system", "user", "assistant"]
    assert result.get("restored_files") == []


@pytest.mark.anyio
async def test_api_errors_are_raised_with_status_code_and_fields(
    aclient: AsyncContextCompactClient,
) -> None:
    with pytest.raises(InvalidRequestError) as bad:
        await aclient.count([user("hi"), {"role": "robot", "content": "x"}])
    assert (bad.value.status, bad.value.code) == (422, "invalid_request")
    assert bad.value.details == [
        {"field": "messages[1].role", "message": "Input should be 'system', 'user' or 'assistant'"}
    ]
    with pytest.raises(NotFoundError) as missing:
        await aclient.get_archive("00001763850000000000-a1b2c3d4e5f6")
    assert (missing.value.status, missing.value.code) == (404, "not_found")
    assert str(missing.value) == ("404 not_found: no archive 00001763850000000000-a1b2c3d4e5f6")


@pytest.mark.anyio
async def test_a_background_compaction_is_started_polled_and_applied(
    aclient: AsyncContextCompactClient,
) -> None:
    job = await aclient.start_compaction(CONVERSATION, force=True, session_id="s-2")
    assert job["state"] in ("queued", "running", "done")
    for _ in range(200):  # bounded: the extractive compaction takes milliseconds
        job = await aclient.get_compaction(job["id"])
        if job["state"] == "done":
            break
        await anyio.sleep(0.01)
    result = job.get("result")
    assert result is not None
    assert result["compacted"]
    later = [*CONVERSATION, user("And now the tests.")]
    applied = await aclient.apply_compaction(job["id"], later)
    assert applied["messages"] == [*result["messages"], user("And now the tests.")]
    assert (applied["replaced_message_count"], applied["kept_message_count"]) == (7, 1)


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
            with pytest.raises(ConflictError) as busy:
                await client.start_compaction(CONVERSATION, force=True, session_id="s-3")
            cancelled = await client.cancel_compaction(first["id"])
            again = await client.get_compaction(first["id"])
    assert (busy.value.status, busy.value.code) == (409, "session_busy")
    assert busy.value.details == [{"field": "session_id", "message": busy.value.message}]
    assert (cancelled["id"], cancelled["state"], again["state"]) == (
        first["id"],
        "cancelled",
        "cancelled",
    )


def test_sync_client_against_a_real_server(sync_client: ContextCompactClient) -> None:
    assert sync_client.healthz() == {"status": "ok"}
    ready = sync_client.readyz()
    assert (ready["ready"], ready["checks"]["data_dir_writable"]) == (True, True)
    counted = sync_client.count(CONVERSATION)
    result = sync_client.compact(CONVERSATION, force=True)
    assert result["compacted"] is True
    assert result["token_count"] == counted["token_count"]
    archive = result.get("archive")
    assert archive is not None
    assert sync_client.get_archive(archive["id"])["messages"] == CONVERSATION[1:]
    assert "_http_requests_total" in sync_client.metrics()


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
        pytest.raises(ConnectionFailedError) as failed,
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
        pytest.raises(UnexpectedResponseError) as failed,
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
    assert (cancelled["state"], cancelled.get("owner"), cancelled.get("cancel_requested")) == (
        "running",
        "replica-a",
        True,
    )


@pytest.mark.anyio
async def test_every_parameter_reaches_the_server(aclient: AsyncContextCompactClient) -> None:
    decision = await aclient.should_compact(
        CONVERSATION,
        format="anthropic",
        tokenizer="tiktoken",
        context_window=100,
        threshold=0.2,
        overflow_threshold=0.3,
        min_messages=9,
    )
    assert (decision["reason"], decision["threshold_tokens"], decision["overflow_tokens"]) == (
        "below_min_messages",
        20,
        30,
    )
    counted = await aclient.count(OPENAI_CONVERSATION, format="openai", tokenizer="tiktoken")
    assert (counted["format"], counted["tokenizer"]) == ("openai", "tiktoken")
    done = await aclient.compact(
        CONVERSATION,
        session_id="s-9",
        reason="tool_execution",
        instructions="Focus on src/app.py.",
        options={"strategy": "full", "max_restore_files": 0},
        force=True,
    )
    assert (done["strategy"], done["compacted"], done.get("restored_files")) == ("full", True, [])
    records = await aclient.list_compactions("s-9")
    assert [(r["reason"], r["strategy"]) for r in records["records"]] == [
        ("tool_execution", "full")
    ]


@pytest.mark.anyio
async def test_the_toolkit_routes(aclient: AsyncContextCompactClient) -> None:
    compressed = await aclient.compress_tool_result(
        "bash",
        {"status": "success", "data": {"stdout": "ok\n" * 500, "exit_code": 0}},
        input={"command": "make"},
        limits={"bash_stdout_head": 1, "bash_stdout_tail": 1},
    )
    assert (compressed["tool"], compressed["rule"]) == ("bash", "bash")
    assert compressed["compressed_chars"] < compressed["original_chars"]
    reminded = await aclient.preprocess_input("Look at @src/app.py and @nope.py.", limit=5)
    assert (reminded["reminded"], [m["path"] for m in reminded["missing"]]) == (
        ["src/app.py"],
        ["nope.py"],
    )
    rules = await aclient.project_rules()
    assert (rules["found"], rules["path"]) == (False, None)
    assembled = await aclient.assemble(
        system="You are a coding agent.", rules="", messages=[user("Hi.")], input="Go on."
    )
    assert assembled["layers"] == ["L1", "L3+input"]
    assert assembled["format"] == "anthropic"


def test_a_401_is_an_unauthorized_error(app_for: Callable[..., FastAPI]) -> None:
    app = app_for(api_token="s3cret")
    with serve_in_thread(app) as url:
        with (
            ContextCompactClient(url, timeout=30) as anonymous,
            pytest.raises(UnauthorizedError) as refused,
        ):
            anonymous.count(CONVERSATION)
        with ContextCompactClient(url, token="s3cret", timeout=30) as allowed:
            assert allowed.count(CONVERSATION)["message_count"] == len(CONVERSATION)
    assert (refused.value.status, refused.value.code) == (401, "unauthorized")


def test_a_503_carries_its_retry_after() -> None:
    answer = {"error": "queue_full", "message": "too many jobs wait", "details": []}
    transport = httpx.MockTransport(
        lambda r: httpx.Response(503, json=answer, headers={"Retry-After": "5"})
    )
    with (
        # Retries honouring Retry-After are tests/test_client_options.py's; here the error.
        ContextCompactClient("http://compact.test", transport=transport, max_retries=0) as c,
        pytest.raises(UnavailableError) as full,
    ):
        c.start_compaction(CONVERSATION, force=True)
    assert (full.value.code, full.value.retry_after) == ("queue_full", 5.0)
    assert isinstance(full.value, ServiceError)
    assert isinstance(full.value, ContextCompactError)


def test_ids_are_sent_escaped_in_the_path() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.raw_path.decode())
        return httpx.Response(200, json={"session_id": "a/b", "records": []})

    with ContextCompactClient("http://compact.test", transport=httpx.MockTransport(answer)) as c:
        c.list_compactions("a/b")
    assert seen == ["/sessions/a%2Fb/compactions"]


CLIENT_DIR = Path(__file__).resolve().parent.parent / "clients" / "python"


def test_the_client_package_imports_neither_the_server_nor_its_frameworks() -> None:
    probe = (
        "import sys, context_compact_client; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'app', 'fastapi', 'starlette', 'pydantic', 'anthropic', 'uvicorn'}))"
    )
    env = {**os.environ, "PYTHONPATH": str(CLIENT_DIR)}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
    project = tomllib.loads((CLIENT_DIR / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["dependencies"] == ["httpx>=0.27,<1"]
    assert (CLIENT_DIR / "context_compact_client" / "py.typed").is_file()


def test_the_server_package_has_no_client_code() -> None:
    assert importlib.util.find_spec("app.client") is None


SPEC = load_spec()
TYPED = [
    name
    for name, value in vars(types).items()
    if isinstance(value, type) and is_typeddict(value) and value.__module__ == types.__name__
]


@pytest.mark.parametrize("name", TYPED)
def test_each_typed_answer_has_the_keys_of_its_schema(name: str) -> None:
    typed = getattr(types, name)
    schema = SPEC["components"]["schemas"][name]
    assert set(typed.__annotations__) == set(schema["properties"])
    if typed.__total__:
        assert set(typed.__required_keys__) == set(schema.get("required", []))


BODIES = {
    "count": "CountRequest",
    "should_compact": "ShouldCompactRequest",
    "compact": "CompactRequestBody",
    "start_compaction": "CompactRequestBody",
    "apply_compaction": "ApplyRequest",
    "compress_tool_result": "CompressToolResultRequest",
    "preprocess_input": "PreprocessInputRequest",
    "assemble": "AssembleRequest",
    "recall": "RecallRequest",
}
PATH_PARAMETERS = {"job_id", "session_id"}
# The provider request whole, as an SDK would send it: its fields are the body's own.
WHOLE_REQUEST = {"request"}
# A Responses API body's `input` is the call's `messages` (placed where `request` holds it).
ALIASES = {"input"}


@pytest.mark.parametrize("client_class", [ContextCompactClient, AsyncContextCompactClient])
@pytest.mark.parametrize(("method", "schema"), sorted(BODIES.items()))
def test_each_method_takes_every_field_of_its_request_body(
    client_class: type[Any], method: str, schema: str
) -> None:
    parameters = set(inspect.signature(getattr(client_class, method)).parameters) - {"self"}
    fields = set(SPEC["components"]["schemas"][schema]["properties"])
    if "model" in fields:  # a provider request's body
        fields -= ALIASES
    assert parameters - (PATH_PARAMETERS - fields) - WHOLE_REQUEST == fields
    if "model" in fields:  # a body that takes a provider request takes it whole
        assert parameters >= WHOLE_REQUEST


def test_the_client_calls_every_operation_of_the_spec() -> None:
    called: set[tuple[str, str]] = set()
    templates = {
        "job-1": "{job_id}",
        "arch-1": "{archive_id}",
        "sess-1": "{session_id}",
    }

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        for value, template in templates.items():
            path = path.replace(value, template)
        called.add((request.method.lower(), path))
        if path == "/metrics":
            return httpx.Response(200, text="# metrics\n")
        status = 202 if path == "/compactions" and request.method == "POST" else 200
        return httpx.Response(status, json={})

    with ContextCompactClient("http://compact.test", transport=httpx.MockTransport(answer)) as c:
        c.count([])
        c.should_compact([])
        c.compact([])
        c.start_compaction([])
        c.get_compaction("job-1")
        c.cancel_compaction("job-1")
        c.apply_compaction("job-1", [])
        c.get_archive("arch-1")
        c.list_compactions("sess-1")
        c.recall("sess-1", "KeyError")
        c.compress_tool_result("Read", "text")
        c.preprocess_input("hi")
        c.project_rules()
        c.assemble()
        c.healthz()
        c.readyz()
        c.metrics()
    documented = {
        (method, path) for path, operations in SPEC["paths"].items() for method in operations
    }
    assert called == documented


@pytest.mark.anyio
async def test_a_whole_sdk_request_goes_as_request_and_comes_back_ready_to_send(
    aclient: AsyncContextCompactClient,
) -> None:
    """`request=` takes the body the SDK would send, every field of it (`max_tokens`,
    `thinking`, `metadata`...): the answer's `request` has them all, in their places, so
    it can go to `client.messages.create(**request)` as it is."""
    body: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "messages": [*CONVERSATION[1:], user("Now run the tests.")],
        "system": "You are a coding agent.",
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "u-1"},
    }
    counted = await aclient.count(body["messages"], request=body)
    assert counted["token_count"] > 0
    decision = await aclient.should_compact(body["messages"], request=body)
    assert decision["context_window"] == 200_000
    done = await aclient.compact(body["messages"], request=body, force=True)
    request = done.get("request")
    assert request is not None
    assert list(request) == list(body)
    assert {k: v for k, v in request.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"
    }
    assert request["messages"][-1] == user("Now run the tests.")
    with ContextCompactClient(transport=httpx.MockTransport(_echo)) as blocking:
        sent = blocking.compact(body["messages"], request=body, model="gpt-4o")
    assert (sent["model"], sent["max_tokens"]) == ("gpt-4o", 4096)  # an argument wins


def _echo(request: httpx.Request) -> httpx.Response:
    """The body sent, as the answer: what the client put on the wire."""
    return httpx.Response(200, json=json.loads(request.content))


@pytest.mark.anyio
async def test_a_whole_responses_request_goes_with_its_items_in_input(
    aclient: AsyncContextCompactClient,
) -> None:
    """A Responses API body (`input`, `instructions`) sent as `request=`, its items as the
    call's messages: they go back in `input`, where the body holds them."""
    body = sdk_body("openai_responses_tool_loop")
    counted = await aclient.count(body["input"], request=body)
    assert counted["format"] == "responses"
    done = await aclient.compact(body["input"], request=body, force=True)
    request = done.get("request")
    assert request is not None
    assert list(request) == list(body)
    assert request["instructions"] == body["instructions"]
    with ContextCompactClient(transport=httpx.MockTransport(_echo)) as blocking:
        sent = blocking.should_compact(body["input"], request=body, options={"threshold": 0.5})
    assert list(sent) == [*body, "options"]
    assert sent["input"] == body["input"]


def test_the_decision_fields_go_at_the_top_level_of_a_compaction() -> None:
    with ContextCompactClient(transport=httpx.MockTransport(_echo)) as blocking:
        sent = blocking.compact(CONVERSATION, context_window=32_000, threshold=0.7, min_messages=2)
    assert (sent["context_window"], sent["threshold"], sent["min_messages"]) == (32_000, 0.7, 2)
