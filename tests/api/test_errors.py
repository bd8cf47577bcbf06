"""One error map: every error carries its HTTP answer and one handler sends it.

Routes catch no error: what the service raises on purpose reaches `_on_compact_error`,
which answers its status, code, details and retry hint; one that carries no status (the
service answers it itself) is an internal error if it ever reaches a route.
"""

from __future__ import annotations

import ast
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from app.api.errors import ApiError, install_error_handlers
from app.core.errors import (
    ArchiveError,
    CompactError,
    InvalidConversationError,
    InvalidRequestError,
    RecallDeadlineError,
    RecordStoreError,
    SummarizerError,
)
from app.core.provider.rules import violations
from app.core.sessions.jobs import JobStoreError
from app.service.jobs import (
    JobNotDoneError,
    PrefixMismatchError,
    QueueFullError,
    SeamError,
    SessionBusyError,
)
from app.service.recall import RecallBusyError
from app.service.slots import BusyError
from tests.builders import parse, tool_result, user

pytestmark = pytest.mark.anyio

ROUTES = Path(__file__).resolve().parents[2] / "app" / "api" / "routes"
BROKEN = violations(parse([user("hi"), tool_result("t1", "orphan")]), "anthropic")[:1]


def test_no_route_catches_an_error() -> None:
    for module in sorted(ROUTES.glob("*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        handlers = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.ExceptHandler)]
        assert handlers == [], f"{module.name}: except at lines {handlers}"


async def answer(error: Exception) -> httpx.Response:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/fail")
    async def fail() -> None:
        raise error

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.get("/fail")


@pytest.mark.parametrize(
    ("error", "status", "code", "details", "retry_after"),
    [
        (BusyError(2, 1.5), 503, "busy", [], "2"),
        (RecallBusyError(4, 1.0), 503, "busy", [], "1"),
        (RecallDeadlineError("stopped at the deadline"), 504, "deadline_exceeded", [], None),
        (QueueFullError(8), 503, "queue_full", [], "5"),
        (ArchiveError("disk gone"), 503, "archive_unreadable", [], None),
        (RecordStoreError("disk gone"), 503, "records_unreadable", [], None),
        (JobStoreError("disk gone"), 503, "job_store_failed", [], None),
        (SessionBusyError("j1"), 409, "session_busy", ["session_id"], None),
        (JobNotDoneError("running"), 409, "job_not_done", ["job_id"], None),
        (PrefixMismatchError(3, 2), 409, "prefix_mismatch", ["messages[3]"], None),
        (SeamError(list(BROKEN)), 409, "invalid_seam", ["messages[1]"], None),
        (InvalidConversationError(BROKEN), 422, "invalid_conversation", ["messages[1]"], None),
        (
            InvalidRequestError("overflow_threshold", "too low"),
            422,
            "invalid_request",
            ["overflow_threshold"],
            None,
        ),
        (
            ApiError(404, "not_found", "no job j9", field="job_id"),
            404,
            "not_found",
            ["job_id"],
            None,
        ),
    ],
)
async def test_each_error_answers_its_status_code_and_fields(
    error: CompactError,
    status: int,
    code: str,
    details: list[str],
    retry_after: str | None,
) -> None:
    response = await answer(error)
    body = response.json()
    assert (response.status_code, body["error"]) == (status, code)
    assert [d["field"] for d in body["details"]] == details
    assert response.headers.get("Retry-After") == retry_after
    assert body["message"] == error.message


def test_an_invalid_conversations_message_names_each_broken_message() -> None:
    error = InvalidConversationError(BROKEN)
    assert error.message == f"messages[1]: {BROKEN[0]}"
    assert error.details() == [("messages[1]", str(BROKEN[0]))]


async def test_an_error_the_service_answers_itself_is_internal_if_it_reaches_a_route() -> None:
    response = await answer(SummarizerError("503 from the model", retryable=True))
    assert response.status_code == 500
    assert response.json()["error"] == "internal_error"
    assert "503 from the model" not in response.text


def test_a_provider_requests_system_shifts_the_indexes_it_names() -> None:
    sent = InvalidConversationError(BROKEN).sent_with(1)  # a top-level system at the head
    assert sent.details() == [("messages[0]", str(BROKEN[0]))]
    assert InvalidConversationError(BROKEN).sent_with(2).details() == [("system", str(BROKEN[0]))]
