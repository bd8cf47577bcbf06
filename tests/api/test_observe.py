from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.adapters.logs import build_handler
from app.core.ports import SummaryRequest
from app.main import create_app
from app.wiring.service import build_service
from tests.builders import FakeSummarizer, assistant, bulk_round, read_round, system, user

pytestmark = pytest.mark.anyio

MARKER = "PRIVATE-MARKER-7f3a"
CONVERSATION = [
    system(f"You are a coding agent. {MARKER}"),
    user(f"Fix the bug in src/app.py. {MARKER}"),
    *bulk_round(),
    *read_round("src/app.py", f"def f(: # {MARKER}"),
    assistant(f"Fixed it. {MARKER}"),
]


@pytest.fixture
def json_log() -> Iterator[io.StringIO]:
    """Every log line, as `python -m app serve` writes it with COMPACT_LOG_FORMAT=json."""
    stream = io.StringIO()
    handler = build_handler("json", stream)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def lines_of(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


async def test_a_sane_request_id_is_returned_as_sent(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz", headers={"X-Request-ID": "agent-7:turn.12_a"})
    assert response.headers["x-request-id"] == "agent-7:turn.12_a"


@pytest.mark.parametrize(
    "sent", [b"x" * 129, b"has space", b"semi;colon", b"tab\t", "ünïcode".encode(), b""]
)
async def test_an_unsafe_request_id_is_replaced_by_a_new_one(
    client: httpx.AsyncClient, sent: bytes
) -> None:
    response = await client.get("/healthz", headers={"X-Request-ID": sent})
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["x-request-id"])


async def test_every_answer_gets_a_request_id_errors_too(client_for: Any) -> None:
    client: httpx.AsyncClient = await client_for(max_request_bytes=10)
    too_large = await client.post("/count", content=b"x" * 20)
    missing = await client.get("/archives/nope")
    assert (too_large.status_code, missing.status_code) == (413, 404)
    assert re.fullmatch(r"[0-9a-f]{32}", too_large.headers["x-request-id"])
    assert re.fullmatch(r"[0-9a-f]{32}", missing.headers["x-request-id"])
    assert too_large.headers["x-request-id"] != missing.headers["x-request-id"]


async def test_log_lines_of_a_compaction_carry_its_request_id_and_never_the_messages(
    client: httpx.AsyncClient, json_log: io.StringIO
) -> None:
    response = await client.post(
        "/compact",
        json={"messages": CONVERSATION, "force": True, "session_id": "s-1"},
        headers={"X-Request-ID": "req-42"},
    )
    assert response.json()["compacted"] is True
    lines = lines_of(json_log)
    assert MARKER not in json_log.getvalue()
    ours = [line for line in lines if line["request_id"] == "req-42"]
    by_message = {line["message"]: line for line in ours}
    completed = by_message["compaction completed"]
    assert (completed["level"], completed["logger"]) == ("info", "context_compact.compaction")
    assert completed["archive_id"] == response.json()["archive"]["id"]
    assert completed["tokens_after"] == response.json()["stats"]["compacted_token_count"]
    request_line = by_message["request"]
    assert {k: request_line[k] for k in ("logger", "method", "route", "status")} == {
        "logger": "context_compact.http",
        "method": "POST",
        "route": "/compact",
        "status": 200,
    }
    assert set(completed) >= {"time", "level", "logger", "message", "request_id"}


async def test_probes_log_at_debug_and_requests_at_info(
    client: httpx.AsyncClient, json_log: io.StringIO
) -> None:
    await client.get("/healthz")
    await client.post("/count", json={"messages": [user("hi")]})
    levels = [(line["route"], line["level"]) for line in lines_of(json_log) if "route" in line]
    assert levels == [("/healthz", "debug"), ("/count", "info")]


async def test_an_unexpected_error_is_a_500_with_its_request_id_logged_and_counted(
    settings_for: Any, tokenizer: Any, json_log: io.StringIO
) -> None:
    def broken(request: SummaryRequest) -> str:
        raise RuntimeError("a bug")

    settings = settings_for()
    app = create_app(
        settings, service=build_service(settings, tokenizer, summarizer=FakeSummarizer(broken))
    )
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://compact.test") as client:
        response = await client.post(
            "/compact",
            json={"messages": CONVERSATION, "force": True},
            headers={"X-Request-ID": "req-500"},
        )
        metrics = (await client.get("/metrics")).text
    assert (response.status_code, response.json()["error"]) == (500, "internal_error")
    assert response.headers["x-request-id"] == "req-500"
    logged = [(line["message"], line["request_id"]) for line in lines_of(json_log)]
    assert ("unhandled error", "req-500") in logged
    assert ("request", "req-500") in logged
    assert (
        'context_compact_http_requests_total{method="POST",route="/compact",status="500"} 1.0'
        in metrics.splitlines()
    )
    assert (
        'context_compact_compactions_total{outcome="error",strategy="full"} 1.0'
        in metrics.splitlines()
    )
    assert MARKER not in json_log.getvalue()


async def test_an_unknown_method_is_labelled_other(client: httpx.AsyncClient) -> None:
    await client.request("BREW", "/count")
    metrics = (await client.get("/metrics")).text
    assert (
        'context_compact_http_requests_total{method="other",route="/count",status="405"} 1.0'
        in metrics.splitlines()
    )
