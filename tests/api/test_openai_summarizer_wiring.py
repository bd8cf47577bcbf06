from __future__ import annotations

from typing import Any

import pytest

from app.settings import Settings
from tests.builders import bulk_round, system, user
from tests.fakes.fake_llm_server import openai_completion, reply, start_fake_llm
from tests.fakes.summaries import llm_summary

pytestmark = pytest.mark.anyio


async def test_compact_summarizes_through_an_openai_compatible_server(client_for: Any) -> None:
    messages = [system("s"), user("fix a.py"), *bulk_round(), user("go on")]
    text = llm_summary(messages[:-1], marker="fix it")
    with start_fake_llm([reply(200, openai_completion(text))]) as fake:
        client = await client_for(
            summarizer="openai",
            openai_base_url=fake.url + "/v1",
            summary_model="qwen-test",
        )
        data = (await client.post("/compact", json={"messages": messages, "force": True})).json()
        [received] = fake.requests
    assert (data["compacted"], data["summarizer"]) == (True, "openai")
    assert data["summary"].startswith(f"{text}\n\n## Ledger\n")
    assert received.body["model"] == "qwen-test"


def test_openai_settings_read_the_common_variable_names() -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        **{"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "http://vllm:8000/v1"},
    )
    assert settings.openai_api_key is not None
    assert settings.openai_api_key.get_secret_value() == "sk-x"
    assert settings.openai_base_url == "http://vllm:8000/v1"
    assert Settings(_env_file=None, summarizer="openai").summarizer_kind == "openai"  # type: ignore[call-arg]
