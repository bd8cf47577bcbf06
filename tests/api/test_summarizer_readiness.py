"""`/readyz` reports whether the `openai` summarizer's server answers; a setting decides
whether readiness waits for it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
import respx

from app.adapters.llm_probe import ModelsProbe, ProbeTiming

pytestmark = pytest.mark.anyio

BASE_URL = "http://llm.test/v1"


@pytest.fixture
def llm() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as router:
        yield router


async def ready(client_for: Any, **settings: Any) -> httpx.Response:
    client = await client_for(summarizer="openai", openai_base_url=BASE_URL, **settings)
    response: httpx.Response = await client.get("/readyz")
    return response


async def test_a_server_that_answers_is_reported_reachable(
    client_for: Any, llm: respx.MockRouter
) -> None:
    llm.get("/models").respond(200, json={"data": []})
    response = await ready(client_for)
    assert response.status_code == 200
    assert response.json()["checks"]["summarizer_reachable"] is True
    assert "reasons" not in response.json()


async def test_a_server_that_is_down_is_reported_without_blocking_by_default(
    client_for: Any, llm: respx.MockRouter
) -> None:
    llm.get("/models").mock(side_effect=httpx.ConnectError("refused"))
    response = await ready(client_for)
    assert response.status_code == 200
    body = response.json()
    assert (body["ready"], body["checks"]["summarizer_reachable"]) == (True, False)
    assert body["reasons"] == {
        "summarizer_reachable": "the summarizer's server did not answer: ConnectError"
    }


async def test_readiness_waits_for_the_server_when_configured(
    client_for: Any, llm: respx.MockRouter
) -> None:
    llm.get("/models").respond(404)
    response = await ready(client_for, readyz_requires_summarizer=True)
    assert response.status_code == 503
    assert response.json()["reasons"] == {
        "summarizer_reachable": "the summarizer's server answered HTTP 404 to GET /models"
    }


async def test_the_extractive_summarizer_has_no_such_check(client_for: Any) -> None:
    client = await client_for()
    assert "summarizer_reachable" not in (await client.get("/readyz")).json()["checks"]


async def test_an_answer_is_reused_for_its_ttl(llm: respx.MockRouter) -> None:
    route = llm.get("/models").respond(200)
    now = [0.0]
    probe = ModelsProbe(BASE_URL, timing=ProbeTiming(ttl=10.0, clock=lambda: now[0]))
    assert [await probe.unreachable_reason() for _ in range(3)] == [None] * 3
    assert route.call_count == 1
    now[0] = 10.0
    route.respond(503)
    assert await probe.unreachable_reason() == (
        "the summarizer's server answered HTTP 503 to GET /models"
    )
    assert route.call_count == 2
    await probe.aclose()


async def test_the_window_comes_from_llama_cpp_props_at_the_servers_root() -> None:
    with respx.mock(assert_all_called=False) as router:
        props = router.get("http://llm.test/props").respond(
            200, json={"default_generation_settings": {"n_ctx": 8192}}
        )
        probe = ModelsProbe(BASE_URL)
        assert [await probe.window(), await probe.window()] == [8192, 8192]
        assert props.call_count == 1  # a window once read is kept
        await probe.aclose()


async def test_the_window_comes_from_vllm_max_model_len_and_none_is_asked_again_later() -> None:
    now = [0.0]
    with respx.mock(assert_all_called=False) as router:
        router.get("http://llm.test/props").respond(404)
        models = router.get(f"{BASE_URL}/models").respond(200, json={"data": [{"id": "m"}]})
        probe = ModelsProbe(BASE_URL, timing=ProbeTiming(ttl=10.0, clock=lambda: now[0]))
        assert await probe.window() is None
        assert await probe.window() is None
        assert models.call_count == 1
        now[0] = 11.0
        models.respond(200, json={"data": [{"id": "m", "max_model_len": 32768}]})
        assert await probe.window() == 32768
        await probe.aclose()


@pytest.mark.slow
async def test_a_server_that_hangs_costs_readyz_its_bound_only(
    client_for: Any, llm: respx.MockRouter
) -> None:
    async def hang(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(30)
        return httpx.Response(200)

    llm.get("/models").mock(side_effect=hang)
    client = await client_for(summarizer="openai", openai_base_url=BASE_URL)
    started = time.monotonic()
    response = await client.get("/readyz")
    assert time.monotonic() - started < 2.0  # the probe's 1 s bound, and a loaded machine
    assert response.json()["reasons"] == {
        "summarizer_reachable": "the summarizer's server did not answer within 1 s"
    }
