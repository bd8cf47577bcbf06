from __future__ import annotations

from typing import Any

import pytest

from app.core.summary.digest import DIGEST_SYSTEM
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
            summary_mode="transcript",
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


GOALS = "The user asked to fix a.py; the agent ran list_tests first."
STATUS = "The tests were listed; next the agent fixes a.py and goes on."


async def test_auto_takes_the_digest_path_for_a_server_on_loopback(client_for: Any) -> None:
    """The model answers one question per narrative section (each checked under its
    heading), the service writes the lists of facts around them."""
    script = [reply(200, openai_completion(GOALS)), reply(200, openai_completion(STATUS))]
    with start_fake_llm(script) as fake:
        client = await client_for(summarizer="openai", openai_base_url=fake.url + "/v1")
        messages = [system("s"), user("fix a.py"), *bulk_round(), user("go on")]
        data = (await client.post("/compact", json={"messages": messages, "force": True})).json()
        goals, status = fake.requests
    for received in (goals, status):
        assert received.body["messages"][0] == {"role": "system", "content": DIGEST_SYSTEM}
        assert received.body["messages"][1]["content"].startswith("<notes>\nUser requests")
    assert goals.body["messages"][1]["content"].endswith(
        "What does the user want, and what was decided? Answer from the notes above in 1 or 2 "
        "short sentences, in your own words."
    )
    assert "What was being done last" in status.body["messages"][1]["content"]
    assert data["summary_chunks"] == 2
    assert data["summary"].startswith(
        '## Goals & Decisions\n- First request: "fix a.py"\n'
        "- The user asked to fix a.py; the agent ran list_tests first.\n\n"
        "## File Operations\n- None.\n\n"
        "## Tool Calls\n- Calls: list_tests 1.\n\n"
        "## Task Status\n- The tests were listed; next the agent fixes a.py and goes on.\n\n"
        "## Errors & Resolutions\n- None observed.\n\n## Ledger\n"
    )
    assert data["messages"][-1] == user("go on")  # the new request stays, after the summary
