"""Every request handed back is one the provider accepts: each body captured from the SDKs'
wire (tests/data/sdk_bodies), compacted by every strategy through every route (`/compact`,
a `/compactions` job, the command line's `compact`), and left unchanged below the
threshold, gives a `request` that passes the strict provider rules (tests/provider_rules.py)
against the body sent, its input and output budget within the window the body fitted.
And that `request` goes through the SDK as it is: `create(**request)` puts exactly it on
the wire of a loopback server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from app.__main__ import main
from tests.fakes.fake_llm_server import anthropic_message, openai_completion, reply, start_fake_llm
from tests.provider_rules import OUTPUT_BUDGET, check
from tests.sdk_bodies import NAMES, api_of, beta, body, messages_key

pytestmark = pytest.mark.anyio

Json = dict[str, Any]
STRATEGIES: dict[str, Json] = {
    "full": {"strategy": "full"},
    "tail": {"strategy": "tail", "tail_keep_recent_rounds": 1},
    "prune": {"strategy": "prune", "prune_keep_recent": 1},
    "selective": {"strategy": "selective", "selective_keep_recent": 2},
    # Half the body's input in the window (set below) with every kept: the rules cannot
    # reach the threshold, and the summary fallback runs after them.
    "selective+summary": {"strategy": "selective", "selective_keep_recent": 1000},
}
CASES = [(name, strategy) for name in NAMES for strategy in STRATEGIES]


async def compacting(client: httpx.AsyncClient, name: str, strategy: str) -> Json:
    options = dict(STRATEGIES[strategy])
    if strategy == "selective+summary":  # the input may take half of what it takes now
        sent = body(name)
        budget = next(sent[k] for k in OUTPUT_BUDGET if k in sent)
        options["context_window"] = await tokens(client, sent) // 2 + budget
    return {**body(name), "force": True, "options": options}


async def window_of(client: httpx.AsyncClient, sent: Json) -> int:
    """The window the sent body fits exactly: its input tokens and its output budget."""
    budget = next(sent[k] for k in OUTPUT_BUDGET if k in sent)
    return await tokens(client, sent) + budget


async def tokens(client: httpx.AsyncClient, request: Json) -> int:
    counted = await client.post("/count", json=request)
    assert counted.status_code == 200, counted.text
    number: int = counted.json()["token_count"]
    return number


async def broken_rules(client: httpx.AsyncClient, name: str, answer: Json) -> list[str]:
    sent = body(name)
    request = answer["request"]
    counted = await tokens(client, request)
    window = await window_of(client, sent)
    found = check(request, api_of(name), sent=sent, window=window, count=lambda _: counted)
    return [str(f) for f in found]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "strategy"), CASES)
async def test_compact_hands_back_a_request_the_provider_accepts(
    client: httpx.AsyncClient, name: str, strategy: str
) -> None:
    response = await client.post("/compact", json=await compacting(client, name, strategy))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["compacted"] is True, answer["reason"]
    assert await broken_rules(client, name, answer) == []


@pytest.mark.parametrize("name", NAMES)
async def test_a_request_below_the_threshold_comes_back_as_sent(
    client: httpx.AsyncClient, name: str
) -> None:
    response = await client.post("/compact", json=body(name))
    assert response.status_code == 200, response.text
    answer = response.json()
    assert (answer["compacted"], answer["reason"]) == (False, "below_threshold")
    assert answer["request"] == body(name)
    assert await broken_rules(client, name, answer) == []


async def job_result(client: httpx.AsyncClient, request: Json) -> Json:
    started = await client.post("/compactions", json=request)
    assert started.status_code == 202, started.text
    for _ in range(400):
        job = (await client.get(f"/compactions/{started.json()['id']}")).json()
        if job["state"] not in ("queued", "running"):
            assert job["state"] == "done", job
            result: Json = job["result"]
            return result
        await asyncio.sleep(0.01)
    raise AssertionError("the job did not finish")


@pytest.mark.slow
@pytest.mark.parametrize(("name", "strategy"), CASES)
async def test_a_background_job_hands_back_a_request_the_provider_accepts(
    client: httpx.AsyncClient, name: str, strategy: str
) -> None:
    answer = await job_result(client, await compacting(client, name, strategy))
    assert answer["compacted"] is True, answer["reason"]
    assert await broken_rules(client, name, answer) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
async def test_the_command_line_hands_back_a_request_the_provider_accepts(
    client: httpx.AsyncClient,
    name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPACT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("COMPACT_WORKDIR", str(tmp_path))
    monkeypatch.setenv("COMPACT_SUMMARIZER", "extractive")
    for strategy in STRATEGIES:
        path = tmp_path / f"{strategy}.json"
        path.write_text(json.dumps(await compacting(client, name, strategy)))
        code = await asyncio.to_thread(main, ["compact", str(path)])
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), strategy
        answer = json.loads(out)
        assert answer["compacted"] is True, (strategy, answer["reason"])
        assert await broken_rules(client, name, answer) == [], strategy


Send = Callable[[Any, Json], None]


def _send(name: str) -> tuple[Any, Send]:
    """A reply the SDK reads, and how the SDK sends a request of this body's call."""
    api = api_of(name)
    if api == "anthropic":
        messages: Send = lambda client, r: (  # noqa: E731
            client.beta.messages.create(**r) if beta(name) else client.messages.create(**r)
        )
        return anthropic_message("ok"), messages
    if api == "chat":
        return openai_completion("ok"), lambda client, r: client.chat.completions.create(**r)
    return {"id": "resp_1", "object": "response", "output": []}, (
        lambda client, r: client.responses.create(**r)
    )


@pytest.mark.slow
@pytest.mark.parametrize(("name", "strategy"), CASES)
async def test_the_request_goes_through_the_sdk_as_it_is(
    client: httpx.AsyncClient, name: str, strategy: str
) -> None:
    answer = (await client.post("/compact", json=await compacting(client, name, strategy))).json()
    request = answer["request"]
    answered, send = _send(name)
    with start_fake_llm([reply(200, answered)]) as fake:
        if api_of(name) == "anthropic":
            sdk: Any = anthropic.Anthropic(api_key="k", base_url=fake.url, max_retries=0)
        else:
            sdk = openai.OpenAI(api_key="k", base_url=f"{fake.url}/v1", max_retries=0)
        with sdk:
            await asyncio.to_thread(send, sdk, request)
        [received] = fake.requests
    assert received.body == request
    assert list(received.body) == list(request)
    assert messages_key(name) in request
