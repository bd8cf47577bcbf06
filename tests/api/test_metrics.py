from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.core.errors import SummarizerError
from app.core.ports import SummaryRequest
from app.main import create_app
from app.wiring.service import build_service
from tests.builders import FakeSummarizer, assistant, bulk_round, read_round, system, user

pytestmark = pytest.mark.anyio

CONVERSATION = [
    system("You are a coding agent."),
    user("Fix the bug in src/app.py."),
    *bulk_round(),
    *read_round("src/app.py", "def f(:"),
    *read_round("README.md", "# readme"),
    assistant("Fixed it."),
]

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(client: httpx.AsyncClient) -> Samples:
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


async def test_a_compaction_is_counted_with_its_tokens_latency_and_skipped_files(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    (workdir / "src").mkdir()
    (workdir / "src" / "app.py").write_text("def f():\n    return 1\n")
    data = (await client.post("/compact", json={"messages": CONVERSATION, "force": True})).json()
    assert data["skipped_files"] == [{"path": "README.md", "reason": "not_found"}]
    samples = await scrape(client)
    compacted = {"strategy": "full"}
    assert (
        value(samples, "context_compact_compactions_total", outcome="compacted", **compacted) == 1.0
    )
    assert value(samples, "context_compact_compaction_tokens_before_count", **compacted) == 1.0
    assert value(samples, "context_compact_compaction_tokens_before_sum", **compacted) == float(
        data["stats"]["original_token_count"]
    )
    assert value(samples, "context_compact_compaction_tokens_after_sum", **compacted) == float(
        data["stats"]["compacted_token_count"]
    )
    assert (
        value(
            samples,
            "context_compact_summarizer_duration_seconds_count",
            summarizer="extractive",
            outcome="ok",
        )
        == 1.0
    )
    assert value(samples, "context_compact_restore_skips_total", reason="not_found") == 1.0
    assert (
        value(
            samples,
            "context_compact_http_requests_total",
            method="POST",
            route="/compact",
            status="200",
        )
        == 1.0
    )


async def test_compactions_that_do_not_compact_are_counted_by_their_reason(
    client: httpx.AsyncClient,
) -> None:
    await client.post("/compact", json={"messages": CONVERSATION})
    await client.post("/compact", json={"messages": CONVERSATION[:2]})
    broken = [system("s"), assistant("no user first"), user("u")]
    assert (await client.post("/compact", json={"messages": broken})).status_code == 422
    samples = await scrape(client)
    outcomes = {
        dict(labels)["outcome"]: count
        for (name, labels), count in samples.items()
        if name == "context_compact_compactions_total"
    }
    assert outcomes == {
        "below_threshold": 1.0,
        "below_min_messages": 1.0,
        "invalid_conversation": 1.0,
    }
    assert value(samples, "context_compact_compaction_tokens_before_count", strategy="full") is None


async def test_requests_are_labelled_by_route_template_never_by_raw_path(
    client_for: Callable[..., Any],
) -> None:
    client: httpx.AsyncClient = await client_for(max_request_bytes=100)
    await client.get("/archives/00001763850000000000-a1b2c3d4e5f6")
    await client.get("/archives/00001763850000000001-a1b2c3d4e5f6")
    await client.get("/wp-admin/setup.php")
    await client.post("/count", content=b"x" * 200, headers={"content-type": "application/json"})
    await client.delete("/count")
    samples = await scrape(client)
    requests = {
        (labels["method"], labels["route"], labels["status"]): count
        for (name, frozen), count in samples.items()
        if name == "context_compact_http_requests_total"
        for labels in [dict(frozen)]
    }
    assert requests == {
        ("GET", "/archives/{archive_id}", "404"): 2.0,
        ("GET", "unmatched", "404"): 1.0,
        ("POST", "/count", "413"): 1.0,
        ("DELETE", "/count", "405"): 1.0,
    }


async def test_a_failing_summarizer_is_timed_as_an_error(
    settings_for: Callable[..., Any], tokenizer: Any
) -> None:
    def fail(request: SummaryRequest) -> str:
        raise SummarizerError("down", retryable=False)

    settings = settings_for()
    app = create_app(
        settings, service=build_service(settings, tokenizer, summarizer=FakeSummarizer(fail))
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://compact.test") as client:
        data = (
            await client.post("/compact", json={"messages": CONVERSATION, "force": True})
        ).json()
        samples = await scrape(client)
    assert data["reason"] == "summarization_failed"
    assert (
        value(
            samples,
            "context_compact_summarizer_duration_seconds_count",
            summarizer="fake",
            outcome="error",
        )
        == 1.0
    )
    assert (
        value(
            samples,
            "context_compact_compactions_total",
            strategy="full",
            outcome="summarization_failed",
        )
        == 1.0
    )


async def test_two_apps_in_one_process_keep_their_own_counts(
    client_for: Callable[..., Any],
) -> None:
    first: httpx.AsyncClient = await client_for()
    second: httpx.AsyncClient = await client_for()
    await first.get("/healthz")
    await first.get("/healthz")
    await second.get("/healthz")
    healthz = {"method": "GET", "route": "/healthz", "status": "200"}
    assert value(await scrape(first), "context_compact_http_requests_total", **healthz) == 2.0
    assert value(await scrape(second), "context_compact_http_requests_total", **healthz) == 1.0
