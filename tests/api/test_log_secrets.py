"""A whole session with every logger at DEBUG: no message content, key or token in any
log record (message, arguments, extra fields, traceback)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.builders import assistant, bulk_round, read_round, system, tool_result, tool_use, user
from tests.fakes.fake_llm_server import (
    anthropic_message,
    openai_completion,
    reply,
    start_fake_llm,
)
from tests.fakes.summaries import llm_summary

pytestmark = pytest.mark.anyio

ANTHROPIC_KEY = "sk-ant-LEAKCHECK-4f1d9a77e2"
OPENAI_KEY = "sk-openai-LEAKCHECK-08c3b6d1"
TOKEN = "bearer-LEAKCHECK-5e0a2c"
WRONG_TOKEN = "bearer-LEAKCHECK-wrong-91b7"
CONTENT = [
    "user-said-LEAKCHECK-6d2e",
    "assistant-said-LEAKCHECK-0b9f",
    "tool-output-LEAKCHECK-77aa",
    "file-body-LEAKCHECK-c4e1",
    "summary-LEAKCHECK-a903",
    "instructions-LEAKCHECK-3321",
]
SECRETS = [ANTHROPIC_KEY, OPENAI_KEY, TOKEN, WRONG_TOKEN, *CONTENT]
LOGGERS = [
    "",
    "context_compact",
    "uvicorn",
    "uvicorn.access",
    "uvicorn.error",
    "httpx",
    "httpcore",
    "asyncio",
    "fastapi",
]


def conversation() -> list[dict[str, Any]]:
    call = tool_use("bash", command="ls")
    return [
        system("You are a coding agent."),
        user(f"Please {CONTENT[0]}"),
        *bulk_round(),
        *read_round("notes.txt", CONTENT[3]),
        assistant(CONTENT[1], call),
        tool_result(call["id"], CONTENT[2]),
        assistant("Done."),
    ]


def leaks(records: list[logging.LogRecord]) -> list[str]:
    found = []
    for record in records:
        text = " ".join(
            [record.getMessage(), repr(record.args), repr(vars(record)), record.exc_text or ""]
        )
        found.extend(f"{record.name}: {secret}" for secret in SECRETS if secret in text)
    return found


async def test_a_full_session_logs_no_content_key_or_token(
    client_for: Any, workdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    (workdir / "notes.txt").write_text(CONTENT[3])
    messages = conversation()
    auth = {"authorization": f"Bearer {TOKEN}"}
    body = {"messages": messages, "force": True, "instructions": CONTENT[5]}
    script = [
        reply(500, {"type": "error", "message": CONTENT[0]}, {"retry-after": "0"}),
        reply(200, anthropic_message(llm_summary(messages, marker=CONTENT[4]))),
        reply(200, anthropic_message("", stop_reason="max_tokens")),
    ]
    with start_fake_llm(script) as fake:
        client = await client_for(
            summarizer="anthropic",
            anthropic_api_key=ANTHROPIC_KEY,
            anthropic_base_url=fake.url,
            api_token=TOKEN,
            summary_attempts=2,
        )
        statuses = [
            (await client.post("/count", json={"messages": messages}, headers=auth)).status_code,
            (
                await client.post("/should-compact", json={"messages": messages}, headers=auth)
            ).status_code,
            (await client.post("/compact", json=body)).status_code,  # no token
            (
                await client.post(
                    "/compact", json=body, headers={"authorization": f"Bearer {WRONG_TOKEN}"}
                )
            ).status_code,
        ]
        compacted = (await client.post("/compact", json=body, headers=auth)).json()
        failed = (await client.post("/compact", json=body, headers=auth)).json()
        archive = await client.get(f"/archives/{compacted['archive']['id']}", headers=auth)
        invalid = await client.post(
            "/compact",
            json={"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
            headers=auth,
        )
    summary = openai_completion(llm_summary(messages, marker=CONTENT[4]))
    with start_fake_llm([reply(200, summary)]) as fake:
        other = await client_for(
            summarizer="openai", openai_base_url=fake.url + "/v1", openai_api_key=OPENAI_KEY
        )
        via_openai = (await other.post("/compact", json=body)).json()
        assert fake.requests[0].headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert statuses == [200, 200, 401, 401]
    assert (compacted["compacted"], compacted["summarizer"]) == (True, "anthropic")
    assert CONTENT[4] in compacted["summary"]
    assert compacted["restored_files"] == [{"path": "notes.txt", "token_count": 10}]
    assert (failed["compacted"], failed["reason"]) == (False, "summarization_failed")
    assert archive.status_code == 200
    assert invalid.status_code == 422
    assert (via_openai["compacted"], via_openai["summarizer"]) == (True, "openai")
    records = caplog.records
    names = {record.name for record in records}
    # the loggers did run: httpx's and httpcore's (both summarizers' calls), ours, at DEBUG
    assert {"httpx", "httpcore.http11", "context_compact.compaction"} <= names
    assert leaks(records) == []
