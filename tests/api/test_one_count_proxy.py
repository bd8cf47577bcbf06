"""One body, one count, through the proxy too: the answer to a request the proxy counted
carries `x-compact-count-tokens`, `/count`'s figure for the body the agent sent, equal to
what `/count` answers for it (the proxy's own `x-compact-tokens-before` reads each
message's JSON and differs by thousands of tokens on the same body)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import MODELS
from app.core.provider import find_model
from app.proxy.app import ProxyApp, ProxyConfig
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import ProxyPolicy
from app.service.metrics import NoMetrics
from app.wiring.service import build_service
from tests.media import b64, png
from tests.proxy.fakes import FakeUpstream, Reply
from tests.sdk_bodies import NAMES, body, headers
from tests.sdk_bodies import path as path_of

pytestmark = pytest.mark.anyio

CONFIG = ProxyConfig(
    anthropic_url="https://anthropic.example", openai_url="https://openai.example", secret=b"k" * 32
)
PROBE = "probe-model"  # the body's own model, with a window small enough to be counted
NO_USAGE = Reply(chunks=(b'{"id": "msg_1"}',))  # no ratio learned: our count stays ours
# The beta body asks the provider to compact its history: passed as sent, never counted.
COUNTED = [n for n in NAMES if n != "anthropic_beta_fields"]
SCREENSHOT = b64(png(1280, 800) + bytes(range(256)) * 1200)  # 300 KB of image data


def _proxy(settings: Any, tokenizer: TiktokenTokenizer, model: str, window: int) -> ProxyApp:
    service = build_service(settings, tokenizer)
    spec = find_model(model, MODELS)
    assert spec is not None
    table = {PROBE: spec.model_copy(update={"context_window": window, "input_limit": None})}
    compactor = ProxyCompactor(service, service, ProxyPolicy(wait_seconds=0.5))
    return ProxyApp(CONFIG, FakeUpstream(lambda sent: NO_USAGE), compactor, table, NoMetrics())


@pytest.mark.parametrize("name", COUNTED)
async def test_the_proxy_reports_the_count_of_count_for_an_sdk_body(
    client: httpx.AsyncClient,
    settings_for: Callable[..., Any],
    tokenizer: TiktokenTokenizer,
    name: str,
) -> None:
    sent = body(name)
    counted = (await client.post("/count", json=sent)).json()["token_count"]
    # Over the limit: counted whatever its bytes.
    app = _proxy(settings_for(), tokenizer, sent["model"], counted)
    wire = {**headers(name), "x-api-key": "sk-test", "authorization": "Bearer sk-test"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as http:
        answer = await http.post(
            path_of(name), content=orjson.dumps({**sent, "model": PROBE}), headers=wire
        )
    assert app.compactor is not None
    await app.compactor.aclose()
    assert answer.status_code == 200
    before = int(answer.headers["x-compact-tokens-before"])
    assert int(answer.headers["x-compact-count-tokens"]) == counted
    assert before != counted  # the proxy's own count, of each message's JSON, is not it


async def test_a_body_the_proxy_does_not_count_has_no_count_header(
    settings_for: Callable[..., Any], tokenizer: TiktokenTokenizer
) -> None:
    app = _proxy(settings_for(), tokenizer, "claude-sonnet-4", 200_000)
    small = {"model": PROBE, "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as http:
        answer = await http.post(
            "/v1/messages", json=small, headers={"x-api-key": "k", "anthropic-version": "1"}
        )
    assert answer.status_code == 200
    assert "x-compact-tokens-before" not in answer.headers
    assert "x-compact-count-tokens" not in answer.headers


async def test_a_resent_history_is_read_once_and_still_counts_as_count_says(
    client: httpx.AsyncClient, settings_for: Callable[..., Any], tokenizer: TiktokenTokenizer
) -> None:
    first = body("anthropic_messages_tools")
    turn = [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "Go on."}]
    later = {**first, "messages": [*first["messages"], *turn]}
    counted = [(await client.post("/count", json=b)).json()["token_count"] for b in (first, later)]
    app = _proxy(settings_for(), tokenizer, first["model"], counted[0])
    wire = {**headers("anthropic_messages_tools"), "x-api-key": "sk-test"}
    seen = []
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as http:
        for sent in (first, later):
            answer = await http.post(
                "/v1/messages", content=orjson.dumps({**sent, "model": PROBE}), headers=wire
            )
            seen.append((int(answer.headers["x-compact-count-tokens"]), len(app.counts)))
    assert app.compactor is not None
    await app.compactor.aclose()
    messages = len(first["messages"])
    assert seen == [(counted[0], messages), (counted[1], messages + 2)]


async def test_a_screenshot_is_counted_by_the_proxy_as_an_image_not_as_its_base64(
    client: httpx.AsyncClient, settings_for: Callable[..., Any], tokenizer: TiktokenTokenizer
) -> None:
    """A pasted screenshot's base64 is hundreds of thousands of tokens as text: counted so,
    one image would have the proxy compact a short session at once."""
    image = {"type": "base64", "media_type": "image/png", "data": SCREENSHOT}
    question = {"type": "text", "text": "What is wrong here?"}
    messages = [{"role": "user", "content": [{"type": "image", "source": image}, question]}]
    sent = {"model": "claude-sonnet-4", "max_tokens": 1024, "messages": messages}
    counted = (await client.post("/count", json=sent)).json()["token_count"]
    app = _proxy(settings_for(), tokenizer, "claude-sonnet-4", 200_000)
    transport = httpx.ASGITransport(app=app)
    wire = {"x-api-key": "sk-test", "anthropic-version": "2023-06-01"}
    async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as http:
        answer = await http.post(
            "/v1/messages", content=orjson.dumps({**sent, "model": PROBE}), headers=wire
        )
    assert app.compactor is not None
    await app.compactor.aclose()
    assert answer.headers["x-compact-action"] == "none"
    assert int(answer.headers["x-compact-count-tokens"]) == counted
    assert abs(int(answer.headers["x-compact-tokens-before"]) - counted) < 100
