"""The app factory's start-up and shutdown."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from asgi_lifespan import LifespanManager

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.prompt import MOST_RECENT_RULE
from app.main import build_service, create_app
from app.settings import Settings
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
