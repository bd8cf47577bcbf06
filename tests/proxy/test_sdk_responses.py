"""The Responses API through the proxy with the real `openai` SDK (`client.responses.create`,
streamed and not) against the fake provider, which refuses over its window as the API
does (a 400, or inside the stream) and holds `input` to the API's rules: a Codex-like
session never sees a context-length error where without the proxy it does, a refused
stream is retried before the client reads a byte of it, and a WebSocket upgrade is
refused at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest
import websockets

from tests.fakes.provider import FakeProvider, Limits, Thinking, ToolCall, answer
from tests.fakes.provider.sdk import openai_client
from tests.fakes.provider.validation import responses_problem
from tests.proxy.live import Live, serve_proxy

pytestmark = pytest.mark.slow

WINDOW = 24_000
MODEL = "gpt-responses-test"
# A model the table thinks larger than the provider's window for it: the proxy sends what
# it judges to fit, and the provider refuses it.
WIDE = "gpt-responses-wide"
MODELS = {
    MODEL: {"context_window": WINDOW, "tokenizer": "o200k", "exact": True},
    WIDE: {"context_window": 10 * WINDOW, "tokenizer": "o200k", "exact": True},
}
INSTRUCTIONS = "You are Codex, a coding agent."
TOOLS: list[Any] = [
    {"type": "function", "name": "shell", "parameters": {"type": "object"}, "strict": False}
]


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[FakeProvider, Live]]:
    with (
        FakeProvider(Limits(windows={MODEL: WINDOW, WIDE: WINDOW})) as provider,
        serve_proxy(provider.url, tmp_path, models=MODELS) as live,
    ):
        provider.respond_with(
            lambda received: answer(
                Thinking("Run the tests again.", "gAAAA" + "x" * 200),
                ToolCall("shell", {"command": "pytest"}),
            )
        )
        yield provider, live


def _output(i: int) -> str:
    lines = [f"tests/test_case_{i}_{j}.py::test_{j} PASSED [{j}%]" for j in range(40)]
    return "\n".join([*lines, f"FAILED tests/test_parser.py::test_round_{i} - KeyError: 'k{i}'"])


def _start() -> list[dict[str, Any]]:
    return [
        {"type": "message", "role": "developer", "content": "<permissions>workspace-write"},
        {"type": "message", "role": "user", "content": "# AGENTS.md\nRun `make test`."},
        {"type": "message", "role": "user", "content": "Fix the parser in src/."},
    ]


def _settled(live: Live) -> None:
    """The agent's own time between turns: longer than a background compaction takes."""
    compactor = live.app.compactor
    assert compactor is not None
    deadline = time.monotonic() + 10
    while any(s.running for s in compactor._sessions.values()) and time.monotonic() < deadline:
        time.sleep(0.01)


def _turn(
    client: openai.OpenAI, items: list[dict[str, Any]], stream: bool
) -> tuple[str, list[Any]]:
    """One request as Codex makes it (its reasoning asked back); the answer's action and
    its output items (the reasoning, then the function call)."""
    options: dict[str, Any] = {
        "model": MODEL,
        "instructions": INSTRUCTIONS,
        "input": items,
        "tools": TOOLS,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": 1000,
        "extra_headers": {"session_id": "codex-run-1"},
    }
    if not stream:
        raw = client.responses.with_raw_response.create(**options)
        return raw.headers["x-compact-action"], list(raw.parse().output)
    raw = client.responses.with_raw_response.create(stream=True, **options)
    events = list(raw.parse())
    kinds = [e.type for e in events]
    assert "error" not in kinds
    assert "response.failed" not in kinds
    return raw.headers["x-compact-action"], list(events[-1].response.output)


@pytest.mark.parametrize("stream", [True, False])
def test_a_codex_session_over_its_window_never_sees_a_context_error(
    live: tuple[FakeProvider, Live], stream: bool
) -> None:
    provider, proxy = live
    items = _start()
    actions = []
    with openai_client(proxy.proxy, api_key="sk-codex") as client:
        for i in range(40):
            action, output = _turn(client, items, stream)
            actions.append(action)
            reasoning, call = output
            assert reasoning.encrypted_content
            items += [item.model_dump(exclude_none=True) for item in output]  # sent back
            items.append(
                {"type": "function_call_output", "call_id": call.call_id, "output": _output(i)}
            )
            _settled(proxy)
    assert all(e.sent.status == 200 for e in provider.exchanges)
    assert "precompact_started" in actions
    assert "compacted" not in actions  # every compaction was ready before it was needed
    assert actions.count("applied") >= 2
    sent = [orjson.loads(e.received.body) for e in provider.exchanges]
    assert all(responses_problem(s) is None for s in sent)
    assert all(s["input"][:2] == items[:2] for s in sent)  # developer and AGENTS.md kept
    assert all(s["instructions"] == INSTRUCTIONS and s["tools"] == TOOLS for s in sent)
    # Directly, the same session runs out of room.
    provider.reset()
    with (
        openai_client(provider.url, api_key="sk-codex") as client,
        pytest.raises(openai.BadRequestError, match="context window"),
    ):
        client.responses.create(model=MODEL, instructions=INSTRUCTIONS, input=items, tools=TOOLS)


@pytest.mark.parametrize("failed", [False, True], ids=["error-event", "response.failed"])
def test_a_stream_refused_for_its_length_is_retried_before_the_client_reads_it(
    live: tuple[FakeProvider, Live], failed: bool
) -> None:
    """The provider's window is smaller than the model table says: the proxy sends a
    request it judges to fit, the provider refuses it inside the stream, and the proxy
    compacts it below the size that failed (the error names no limit) and sends it once
    more."""
    provider, proxy = live
    provider.state.responses_failed = failed
    items = _start()
    for i in range(45):
        call_id = f"call_{i}"
        arguments = '{"command":"pytest"}'
        items += [
            {"type": "function_call", "call_id": call_id, "name": "shell", "arguments": arguments},
            {"type": "function_call_output", "call_id": call_id, "output": _output(i)},
        ]
    with openai_client(proxy.proxy, api_key="sk-codex") as client:
        raw = client.responses.with_raw_response.create(
            model=WIDE, instructions=INSTRUCTIONS, input=items, tools=TOOLS, stream=True,
            extra_headers={"x-compact-session": "refused-stream"}, max_output_tokens=1000,
        )  # fmt: skip
        kinds = [e.type for e in raw.parse()]
    assert raw.headers["x-compact-action"] == "retried"
    assert (kinds[0], kinds[-1]) == ("response.created", "response.completed")
    assert "error" not in kinds
    assert "response.failed" not in kinds
    refused, accepted = provider.exchanges[-2:]
    assert b"context_length_exceeded" in b"".join(refused.sent.chunks)
    assert len(accepted.received.body) < len(refused.received.body)
    assert responses_problem(orjson.loads(accepted.received.body)) is None


def test_a_history_the_provider_holds_is_sent_as_it_is(live: tuple[FakeProvider, Live]) -> None:
    provider, proxy = live
    with openai_client(proxy.proxy, api_key="sk-codex") as client:
        raw = client.responses.with_raw_response.create(
            model=MODEL, input="And now the docs.", previous_response_id="resp_earlier"
        )
    assert raw.headers["x-compact-reason"] == "server_state"
    assert orjson.loads(provider.last.received.body)["previous_response_id"] == "resp_earlier"


def test_a_websocket_upgrade_is_refused_with_a_426_at_once(
    live: tuple[FakeProvider, Live],
) -> None:
    provider, proxy = live
    url = proxy.proxy.replace("http://", "ws://") + "/v1/responses"

    async def connect() -> int:
        try:
            async with websockets.connect(url, open_timeout=5):
                return 101
        except websockets.InvalidStatus as refused:
            return int(refused.response.status_code)

    began = time.monotonic()
    status = asyncio.run(connect())
    assert status == 426
    assert time.monotonic() - began < 2
    assert provider.exchanges == []
