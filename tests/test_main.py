"""The app factory's start-up and shutdown."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from asgi_lifespan import LifespanManager

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.summary.prompt import MOST_RECENT_RULE
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service
from tests.builders import FakeSummarizer, assistant, parse, user

pytestmark = pytest.mark.anyio


async def test_the_start_up_heap_is_frozen_while_the_app_runs_and_thawed_after(
    tmp_path: Path, tokenizer: TiktokenTokenizer
) -> None:
    settings = Settings(_env_file=None, workdir=str(tmp_path), data_dir=str(tmp_path / "data"))  # type: ignore[call-arg]
    app = create_app(settings, service=build_service(settings, tokenizer))
    async with LifespanManager(app):
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize(
    ("llm", "fallback", "prompt_built"),
    [(False, "none", False), (True, "none", True), (True, "extractive", True)],
)
def test_the_summary_prompt_is_built_only_when_a_wired_summarizer_reads_it(
    tmp_path: Path, tokenizer: TiktokenTokenizer, llm: bool, fallback: str, prompt_built: bool
) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        workdir=str(tmp_path),
        data_dir=str(tmp_path / "data"),
        summarizer="extractive",
        summary_fallback=fallback,
    )
    service = build_service(
        settings, tokenizer, summarizer=FakeSummarizer(name="openai") if llm else None
    )
    rest = parse([user("Fix a.py."), assistant("Done.")])
    request = service.summaries.request(rest, 1200, None)
    assert (request.messages, MOST_RECENT_RULE in request.prompt) == (tuple(rest), prompt_built)
    assert (request.prompt == "") is not prompt_built


@pytest.mark.parametrize(
    ("values", "warned"),
    [
        ({}, True),  # the defaults: 100k tokens of transcript in 60 s
        ({"summary_input_budget": 2000, "summary_max_tokens": 100}, False),
        ({"summary_mode": "digest", "summary_input_budget": 6000, "summary_timeout": 900}, True),
        ({"summary_mode": "digest", "summary_timeout": 150, "summary_deadline": 150}, True),
        (  # the local CPU profile of docs/summaries.md
            {
                "summary_mode": "digest",
                "summary_input_budget": 6000,
                "summary_max_tokens": 700,
                "summary_timeout": 200,
                "summary_deadline": 200,
            },
            False,
        ),
        ({"openai_base_url": "https://llm.example.com/v1"}, False),  # not a local server
    ],
)
async def test_start_up_warns_when_a_local_servers_call_cannot_fit_the_deadlines(
    tmp_path: Path,
    tokenizer: TiktokenTokenizer,
    caplog: pytest.LogCaptureFixture,
    values: dict[str, object],
    warned: bool,
) -> None:
    local = {"openai_base_url": "http://127.0.0.1:8080/v1", "summary_mode": "transcript"}
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        workdir=str(tmp_path),
        data_dir=str(tmp_path / "data"),
        summarizer="openai",
        **(local | values),
    )
    app = create_app(settings, service=build_service(settings, tokenizer))
    async with LifespanManager(app):
        pass
    found = [r.getMessage() for r in caplog.records if "on a local CPU server" in r.getMessage()]
    assert bool(found) is warned
    if not values:
        assert found[0].startswith("a summary call of up to 100000 input and 4096 output tokens")
        assert "COMPACT_SUMMARY_TIMEOUT=60 / COMPACT_SUMMARY_DEADLINE=120" in found[0]
