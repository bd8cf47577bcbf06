from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.ports import SummaryRequest
from app.core.sessions.ids import archive_sha256
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service
from tests.builders import (
    FakeSummarizer,
    assistant,
    bulk_round,
    read_round,
    system,
    tool_result,
    tool_use,
    user,
)

pytestmark = pytest.mark.anyio

CONVERSATION: list[dict[str, Any]] = [
    system("You are a coding agent."),
    user("Fix the bug in a.py."),
    *bulk_round(),
    *read_round("a.py", "old a"),
    assistant("Done."),
]

OPENAI_CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix a.py."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "old a"},
    {"role": "assistant", "content": "Done."},
]


class Gate:
    def __init__(self) -> None:
        self.opened = asyncio.Event()

    async def __call__(self, request: SummaryRequest) -> str:
        await self.opened.wait()
        return "SUMMARY"


@pytest.fixture
async def app_for(
    settings_for: Callable[..., Settings], tokenizer: TiktokenTokenizer
) -> AsyncIterator[Callable[..., Any]]:
    """An in-process client over the real ASGI stack whose summarizer a test controls;
    `make.stop(client)` ends its lifespan like a process exit."""
    running: list[tuple[LifespanManager, httpx.AsyncClient]] = []

    async def stop(client: httpx.AsyncClient) -> None:
        for entry in [e for e in running if e[1] is client]:
            running.remove(entry)
            await client.aclose()
            await entry[0].__aexit__(None, None, None)

    async def make(gate: Gate | None = None, **overrides: Any) -> httpx.AsyncClient:
        settings = settings_for(**overrides)
        service = build_service(settings, tokenizer)
        if gate is not None:
            service.summarizer = FakeSummarizer(gate)
        manager = LifespanManager(create_app(settings, service=service))
        await manager.__aenter__()
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=manager.app), base_url="http://compact.test"
        )
        running.append((manager, client))
        return client

    make.stop = stop  # type: ignore[attr-defined]
    yield make
    for manager, client in running:
        await client.aclose()
        await manager.__aexit__(None, None, None)


async def wait_for(client: httpx.AsyncClient, job_id: str, state: str) -> dict[str, Any]:
    for _ in range(200):
        response = await client.get(f"/compactions/{job_id}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        if body["state"] == state:
            return body
        await asyncio.sleep(0.005)
    raise AssertionError(f"job never became {state}: {body}")


async def test_post_answers_202_at_once_and_the_job_runs_to_done(
    app_for: Callable[..., Any],
) -> None:
    gate = Gate()
    client = await app_for(gate)
    response = await client.post(
        "/compactions", json={"messages": CONVERSATION, "force": True, "session_id": "s1"}
    )
    assert response.status_code == 202
    job = response.json()
    assert job["state"] == "queued"
    assert job["session_id"] == "s1"
    assert job["sent_count"] == len(CONVERSATION)
    assert job["sent_sha256"] == archive_sha256(CONVERSATION)
    assert job["result"] is None
    assert response.headers["location"] == f"/compactions/{job['id']}"
    running = await wait_for(client, job["id"], "running")
    assert running["replaces_message_count"] is None
    gate.opened.set()
    done = await wait_for(client, job["id"], "done")
    assert done["result"]["compacted"] is True
    assert done["result"]["summary"].startswith("SUMMARY\n\n## Ledger\n")
    assert done["replaces_message_count"] == len(CONVERSATION)
    assert done["finished_at"] is not None


async def test_apply_swaps_in_the_result_and_keeps_messages_appended_meanwhile(
    app_for: Callable[..., Any],
) -> None:
    client = await app_for()
    job = (await client.post("/compactions", json={"messages": CONVERSATION, "force": True})).json()
    done = await wait_for(client, job["id"], "done")
    call = tool_use("read_file", path="b.py")
    appended = [user("Now b.py."), assistant("Reading.", call)]
    response = await client.post(
        f"/compactions/{job['id']}/apply", json={"messages": [*CONVERSATION, *appended]}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["messages"] == [*done["result"]["messages"], *appended]
    assert body["replaced_message_count"] == len(CONVERSATION)
    assert body["kept_message_count"] == 2
    assert body["compacted"] is True
    assert body["format"] == "anthropic"


async def test_apply_keeps_the_openai_shape(app_for: Callable[..., Any]) -> None:
    client = await app_for()
    job = (
        await client.post("/compactions", json={"messages": OPENAI_CONVERSATION, "force": True})
    ).json()
    assert job["format"] == "openai"
    assert job["sent_count"] == len(OPENAI_CONVERSATION)
    await wait_for(client, job["id"], "done")
    appended = {"role": "user", "content": "Next."}
    response = await client.post(
        f"/compactions/{job['id']}/apply", json={"messages": [*OPENAI_CONVERSATION, appended]}
    )
    assert response.status_code == 200, response.text
    assert response.json()["messages"][-1] == appended


async def test_apply_answers_409_naming_the_first_edited_message(
    app_for: Callable[..., Any],
) -> None:
    client = await app_for()
    job = (await client.post("/compactions", json={"messages": CONVERSATION, "force": True})).json()
    await wait_for(client, job["id"], "done")
    edited = [*CONVERSATION, user("next")]
    edited[3] = user("a different tool result")
    response = await client.post(f"/compactions/{job['id']}/apply", json={"messages": edited})
    assert response.status_code == 409
    body = response.json()
    assert body["error"] == "prefix_mismatch"
    assert body["details"][0]["field"] == "messages[3]"


async def test_apply_before_done_is_409_and_unknown_jobs_are_404(
    app_for: Callable[..., Any],
) -> None:
    client = await app_for(Gate())
    job = (await client.post("/compactions", json={"messages": CONVERSATION, "force": True})).json()
    response = await client.post(f"/compactions/{job['id']}/apply", json={"messages": CONVERSATION})
    assert response.status_code == 409
    assert response.json()["error"] == "job_not_done"
    assert (await client.get("/compactions/nope")).status_code == 404
    assert (await client.delete("/compactions/nope")).status_code == 404
    invalid = await client.get("/compactions/-not-an-id")
    assert invalid.status_code == 422
    assert invalid.json()["details"][0]["field"] == "job_id"


async def test_delete_cancels_a_running_job(app_for: Callable[..., Any]) -> None:
    client = await app_for(Gate())
    job = (await client.post("/compactions", json={"messages": CONVERSATION, "force": True})).json()
    await wait_for(client, job["id"], "running")
    response = await client.delete(f"/compactions/{job['id']}")
    assert response.status_code == 200
    assert response.json()["state"] == "cancelled"
    assert (await client.get(f"/compactions/{job['id']}")).json()["state"] == "cancelled"


async def test_a_second_job_of_a_session_in_flight_is_409(app_for: Callable[..., Any]) -> None:
    client = await app_for(Gate())
    body = {"messages": CONVERSATION, "force": True, "session_id": "s1"}
    first = await client.post("/compactions", json=body)
    assert first.status_code == 202
    second = await client.post("/compactions", json=body)
    assert second.status_code == 409
    assert second.json()["error"] == "session_busy"
    assert first.json()["id"] in second.json()["message"]


async def test_a_full_queue_answers_503_with_retry_after(app_for: Callable[..., Any]) -> None:
    client = await app_for(Gate(), job_workers=1, job_queue_limit=1)
    body = {"messages": CONVERSATION, "force": True}
    first = (await client.post("/compactions", json=body)).json()
    await wait_for(client, first["id"], "running")
    assert (await client.post("/compactions", json=body)).status_code == 202
    full = await client.post("/compactions", json=body)
    assert full.status_code == 503
    assert full.json()["error"] == "queue_full"
    assert full.headers["retry-after"] == "5"


async def test_an_invalid_conversation_fails_the_job(app_for: Callable[..., Any]) -> None:
    client = await app_for()
    messages = [user("a"), user("b"), assistant("c")]
    job = (await client.post("/compactions", json={"messages": messages})).json()
    failed = await wait_for(client, job["id"], "failed")
    assert failed["reason"] == "invalid_conversation"
    assert "messages[1]" in failed["message"]


async def test_a_restart_mid_job_marks_it_interrupted_and_keeps_done_results(
    app_for: Callable[..., Any],
) -> None:
    gate = Gate()
    before = await app_for(gate)
    body = {"messages": CONVERSATION, "force": True}
    finished = (await before.post("/compactions", json=body)).json()
    await wait_for(before, finished["id"], "running")
    gate.opened.set()
    await wait_for(before, finished["id"], "done")
    gate.opened.clear()
    interrupted = (await before.post("/compactions", json=body)).json()
    await wait_for(before, interrupted["id"], "running")
    await app_for.stop(before)  # type: ignore[attr-defined]

    after = await app_for(Gate())  # the next process over the same data directory
    assert (await after.get(f"/compactions/{finished['id']}")).json()["state"] == "done"
    failed = (await after.get(f"/compactions/{interrupted['id']}")).json()
    assert failed["state"] == "failed"
    assert failed["reason"] == "interrupted"


async def test_a_job_sent_between_a_tool_call_and_its_result_applies_unchanged(
    app_for: Callable[..., Any],
) -> None:
    client = await app_for()
    call = tool_use("read_file", path="b.py")
    sent = [*CONVERSATION, user("And b.py?"), assistant(call)]
    job = (await client.post("/compactions", json={"messages": sent, "force": True})).json()
    await wait_for(client, job["id"], "done")
    current = [*sent, tool_result(call["id"], "b")]
    response = await client.post(f"/compactions/{job['id']}/apply", json={"messages": current})
    assert response.status_code == 200
    assert response.json()["messages"] == current


async def test_any_replica_answers_for_a_job_of_another_on_the_same_data_directory(
    app_for: Callable[..., Any],
) -> None:
    gate = Gate()
    a = await app_for(gate)
    b = await app_for(Gate())
    body = {"messages": CONVERSATION, "force": True, "session_id": "s1"}
    job = (await a.post("/compactions", json=body)).json()
    await wait_for(a, job["id"], "running")
    busy = await b.post("/compactions", json=body)
    assert busy.status_code == 409
    assert busy.json()["error"] == "session_busy"
    assert busy.json()["message"] == f"the session already has a job in flight: {job['id']}"
    seen = await wait_for(b, job["id"], "running")
    assert (seen["owner"], seen["cancel_requested"]) == (job["owner"], False)

    gate.opened.set()
    done = await wait_for(b, job["id"], "done")
    assert done["replaces_message_count"] == len(CONVERSATION)
    applied = await b.post(f"/compactions/{job['id']}/apply", json={"messages": CONVERSATION})
    assert applied.status_code == 200
    assert applied.json()["messages"] == done["result"]["messages"]


@pytest.mark.slow
async def test_delete_on_another_replica_answers_202_and_the_owner_cancels(
    app_for: Callable[..., Any],
) -> None:
    a = await app_for(Gate(), job_lease_seconds=1.5)  # a heartbeat every 0.5 s
    b = await app_for(Gate())
    job = (await a.post("/compactions", json={"messages": CONVERSATION, "force": True})).json()
    await wait_for(b, job["id"], "running")  # as written to the data directory
    requested = await b.delete(f"/compactions/{job['id']}")
    assert requested.status_code == 202
    assert (requested.json()["state"], requested.json()["cancel_requested"]) == ("running", True)
    for _ in range(100):  # up to 5 s: the owner's next heartbeat
        cancelled = (await b.get(f"/compactions/{job['id']}")).json()
        if cancelled["state"] != "running":
            break
        await asyncio.sleep(0.05)
    assert (cancelled["state"], cancelled["reason"]) == ("cancelled", "cancelled")
