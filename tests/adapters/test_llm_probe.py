"""The LLM server's window and token ratio as the probe reads them: Ollama's `/api/show`,
the tokenize endpoints of llama.cpp, vLLM and llama-cpp-python, each answered by respx."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
import respx

from app.adapters.llm_probe import ModelsProbe, ProbeTiming, ollama_window
from app.core.request_context import deadline_at
from app.core.summary.server_ratio import ratio_sample
from tests.fakes.fake_llm_server import reply, start_fake_llm

pytestmark = pytest.mark.anyio

ROOT = "http://llm.test"
BASE_URL = f"{ROOT}/v1"


def cl100k_1000(text: str) -> int:
    """A cl100k count that makes the ratio a round number: 1000 for any text."""
    return 1000


@pytest.fixture
def server() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as router:
        yield router


def probe_of(server: respx.MockRouter, **options: Any) -> ModelsProbe:
    """A probe of a server that answers what the test routed, and 404 to the rest."""
    server.route().respond(404)
    return ModelsProbe(BASE_URL, **options)


def ollama_show(parameters: str | None, trained: int = 32768) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "modelfile": "FROM qwen2.5-coder:7b",
        "template": "{{ .Prompt }}",
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": trained},
    }
    if parameters is not None:
        answer["parameters"] = parameters
    return answer


async def test_ollama_serves_the_num_ctx_of_the_models_parameters(
    server: respx.MockRouter,
) -> None:
    server.get(f"{BASE_URL}/models").respond(200, json={"data": [{"id": "qwen2.5-coder:7b"}]})
    show = server.post(f"{ROOT}/api/show").respond(
        200, json=ollama_show('num_ctx                        8192\nstop "<|im_end|>"')
    )
    probe = probe_of(server, model="qwen2.5-coder:7b")
    assert [await probe.window(), await probe.window()] == [8192, 8192]
    assert show.call_count == 1
    assert json.loads(show.calls[0].request.content) == {
        "model": "qwen2.5-coder:7b",
        "name": "qwen2.5-coder:7b",
    }
    await probe.aclose()


def test_a_num_ctx_above_the_trained_length_is_served_at_the_trained_length() -> None:
    assert ollama_window(ollama_show("num_ctx 65536", trained=32768)) == 32768


def test_without_num_ctx_ollamas_window_is_unknown_not_the_trained_length() -> None:
    assert ollama_window(ollama_show('stop "<|im_end|>"\ntemperature 0.2')) is None
    assert ollama_window(ollama_show(None)) is None
    assert ollama_window({"parameters": "num_ctx 4096"}) == 4096  # no model_info


async def test_ollama_without_num_ctx_is_warned_about_once_and_keeps_the_budget(
    server: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    server.post(f"{ROOT}/api/show").respond(200, json=ollama_show("temperature 0.2"))
    now = [0.0]
    probe = probe_of(server, model="llama3.2", timing=ProbeTiming(ttl=10.0, clock=lambda: now[0]))
    with caplog.at_level(logging.WARNING, logger="context_compact.summarizer"):
        assert await probe.window() is None
        now[0] = 11.0
        assert await probe.window() is None
    assert [r.getMessage() for r in caplog.records] == [
        "Ollama serves the model llama3.2 with its default context length (no num_ctx in its "
        "parameters, and its API does not state the default): prompts longer are cut from "
        "their start. Set COMPACT_SUMMARY_SERVER_WINDOW to that length (or num_ctx in the "
        "Modelfile)"
    ]
    await probe.aclose()


async def test_the_configured_window_serves_a_server_that_reports_none(
    server: respx.MockRouter, caplog: pytest.LogCaptureFixture
) -> None:
    server.post(f"{ROOT}/api/show").respond(200, json=ollama_show(None))
    probe = probe_of(server, model="m", configured_window=4096)
    with caplog.at_level(logging.WARNING, logger="context_compact.summarizer"):
        assert await probe.window() == 4096
    assert caplog.records == []
    await probe.aclose()


async def test_a_reported_window_wins_over_the_configured_one(server: respx.MockRouter) -> None:
    server.get(f"{ROOT}/props").respond(200, json={"default_generation_settings": {"n_ctx": 8192}})
    probe = probe_of(server, model="m", configured_window=4096)
    assert await probe.window() == 8192
    await probe.aclose()


async def test_llama_cpp_counts_the_sample_with_tokenize(server: respx.MockRouter) -> None:
    tokenize = server.post(f"{ROOT}/tokenize").respond(200, json={"tokens": list(range(1200))})
    probe = probe_of(server, model="local", count=cl100k_1000)
    assert await probe.ratio() == pytest.approx(1.2 * 1.08)
    assert await probe.ratio() == pytest.approx(1.296)
    assert tokenize.call_count == 1  # a measured ratio is kept
    sent = json.loads(tokenize.calls[0].request.content)
    assert sent == {"content": ratio_sample(), "prompt": ratio_sample(), "model": "local"}
    await probe.aclose()


async def test_vllm_answers_tokenize_with_a_count(server: respx.MockRouter) -> None:
    server.post(f"{ROOT}/tokenize").respond(
        200, json={"count": 1020, "tokens": [1] * 1020, "max_model_len": 32768}
    )
    probe = probe_of(server, model="m", count=cl100k_1000)
    assert await probe.ratio() == pytest.approx(1.02 * 1.08)
    await probe.aclose()


async def test_llama_cpp_python_counts_the_sample_with_extras_tokenize_count(
    server: respx.MockRouter,
) -> None:
    extras = server.post(f"{ROOT}/extras/tokenize/count").respond(200, json={"count": 1100})
    probe = probe_of(server, model="local", count=cl100k_1000)
    assert await probe.ratio() == pytest.approx(1.1 * 1.08)
    assert json.loads(extras.calls[0].request.content) == {
        "input": ratio_sample(),
        "model": "local",
    }
    await probe.aclose()


async def test_a_server_that_cannot_count_has_no_ratio_asked_again_after_the_ttl(
    server: respx.MockRouter,
) -> None:
    now = [0.0]
    extras = server.post(f"{ROOT}/extras/tokenize/count").respond(404)
    probe = probe_of(server, count=cl100k_1000, timing=ProbeTiming(ttl=10.0, clock=lambda: now[0]))
    assert [await probe.ratio(), await probe.ratio()] == [None, None]
    assert server.calls.call_count == 2  # /tokenize and /extras/tokenize/count, once
    now[0] = 11.0
    extras.respond(200, json={"count": 1300})
    assert await probe.ratio() == pytest.approx(1.3 * 1.08)
    await probe.aclose()


@pytest.mark.parametrize("count", [0, 400, 4100])
async def test_a_count_no_tokenizer_gives_is_not_a_ratio(
    server: respx.MockRouter, count: int
) -> None:
    server.post(f"{ROOT}/extras/tokenize/count").respond(200, json={"count": count})
    probe = probe_of(server, count=cl100k_1000)
    assert await probe.ratio() is None
    await probe.aclose()


async def test_without_a_local_count_no_ratio_is_asked(server: respx.MockRouter) -> None:
    probe = probe_of(server)
    assert await probe.ratio() is None
    assert server.calls.call_count == 0
    await probe.aclose()


# An answer of ~200 bytes, one byte every 20 ms: ~4 s in all.
DRIPPING = reply(200, {"data": [], "note": "x" * 200}, drip=0.02)


async def test_a_server_that_drips_is_cut_at_the_timeout_and_not_asked_again_before_the_ttl() -> (
    None
):
    """httpx's read timeout is per read: a byte every 20 ms never trips it. The whole call is
    bounded, and a server that did not answer in time is not asked the next question."""
    with start_fake_llm([DRIPPING], any_path=True) as fake:
        probe = ModelsProbe(
            fake.url + "/v1",
            model="m",
            count=cl100k_1000,
            configured_window=4096,
            timing=ProbeTiming(timeout=0.2),
        )
        started = time.monotonic()
        window, ratio = await probe.window(), await probe.ratio()
        reason = await probe.unreachable_reason()
        took = time.monotonic() - started
        asked = fake.received
        await probe.aclose()
    assert (window, ratio, asked) == (4096, None, 1)
    assert reason == "the summarizer's server did not answer within 0.2 s"
    assert took < 0.6  # the answer would take ~4 s


async def test_a_probe_call_ends_at_the_deadline_of_the_request_it_serves() -> None:
    with start_fake_llm([DRIPPING], any_path=True) as fake:
        probe = ModelsProbe(fake.url + "/v1", timing=ProbeTiming(timeout=30.0))
        started = time.monotonic()
        with deadline_at(time.monotonic() + 0.2):
            reason = await probe.unreachable_reason()
        took = time.monotonic() - started
        await probe.aclose()
    assert reason == "the summarizer's server did not answer before the deadline of the request"
    assert took < 0.6
