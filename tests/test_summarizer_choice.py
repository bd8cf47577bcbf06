"""Which summarizer runs: never a paid one unless this service was configured for it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from app.adapters.tokenizer import TiktokenTokenizer
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "ANTHROPIC_API_KEY",
        "COMPACT_ANTHROPIC_API_KEY",
        "COMPACT_SUMMARIZER",
        "COMPACT_SUMMARY_FALLBACK",
        "OPENAI_API_KEY",
        "COMPACT_OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)


def settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, workdir=str(tmp_path), data_dir=str(tmp_path / "data"))  # type: ignore[call-arg]


def test_the_sdk_key_in_the_environment_leaves_auto_extractive(
    tmp_path: Path, tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-shell")
    chosen = settings(tmp_path)
    assert chosen.summarizer_kind == "extractive"
    assert build_service(chosen, tokenizer).summarizer.name == "extractive"


def test_a_key_under_our_own_prefix_makes_auto_anthropic(
    tmp_path: Path, tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACT_ANTHROPIC_API_KEY", "sk-ant-ours")
    chosen = settings(tmp_path)
    assert chosen.summarizer_kind == "anthropic"
    assert build_service(chosen, tokenizer).summarizer.name == "anthropic"


def test_asking_for_anthropic_by_name_uses_the_sdk_key(
    tmp_path: Path, tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-shell")
    monkeypatch.setenv("COMPACT_SUMMARIZER", "anthropic")
    chosen = settings(tmp_path)
    assert chosen.summarizer_kind == "anthropic"
    key = chosen.anthropic_key
    assert key is not None
    assert key.get_secret_value() == "sk-ant-from-the-shell"
    assert build_service(chosen, tokenizer).summarizer.name == "anthropic"


def test_our_key_wins_over_the_sdk_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-shell")
    monkeypatch.setenv("COMPACT_ANTHROPIC_API_KEY", "sk-ant-ours")
    key = settings(tmp_path).anthropic_key
    assert key is not None
    assert key.get_secret_value() == "sk-ant-ours"


def test_a_failed_llm_summary_falls_back_to_the_extractive_one_by_default(
    tmp_path: Path, tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACT_ANTHROPIC_API_KEY", "sk-ant-ours")
    chosen = settings(tmp_path)
    assert chosen.summary_fallback == "extractive"
    fallback = build_service(chosen, tokenizer).fallback
    assert fallback is not None
    assert fallback.name == "extractive"


async def started_ready(
    chosen: Settings, tokenizer: TiktokenTokenizer, caplog: pytest.LogCaptureFixture
) -> Any:
    """`/readyz` of the app started with `chosen`, its start-up logged into `caplog`."""
    app = create_app(chosen, service=build_service(chosen, tokenizer))
    with caplog.at_level(logging.INFO, logger="context_compact"):
        async with LifespanManager(app) as manager:
            transport = httpx.ASGITransport(app=manager.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                return (await client.get("/readyz")).json()


@pytest.mark.slow
async def test_readyz_and_the_start_up_line_state_the_summarizer_and_a_key_left_unused(
    tmp_path: Path,
    tokenizer: TiktokenTokenizer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-shell")
    chosen = settings(tmp_path)
    ready = await started_ready(chosen, tokenizer, caplog)
    assert (ready["summarizer"], ready["summary_fallback"]) == ("extractive", "none")
    [started] = [r for r in caplog.records if r.getMessage() == "context compact ready"]
    assert (vars(started)["summarizer"], vars(started)["summary_fallback"]) == (
        "extractive",
        "none",
    )
    notes = [r.getMessage() for r in caplog.records if "ANTHROPIC_API_KEY" in r.getMessage()]
    assert notes == [
        "ANTHROPIC_API_KEY is set but not used: COMPACT_SUMMARIZER=auto summarizes with "
        "Anthropic only for COMPACT_ANTHROPIC_API_KEY; set COMPACT_SUMMARIZER=anthropic to use it"
    ]
    assert "sk-ant-from-the-shell" not in caplog.text


@pytest.mark.slow
async def test_an_openai_key_in_the_environment_leaves_auto_extractive_and_says_so(
    tmp_path: Path,
    tokenizer: TiktokenTokenizer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An agent's shell often exports the OpenAI SDK's key: `auto` never calls an
    OpenAI-compatible server, and the start-up log says the key is left unused."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-from-the-shell")
    chosen = settings(tmp_path)
    assert chosen.summarizer_kind == "extractive"
    ready = await started_ready(chosen, tokenizer, caplog)
    assert ready["summarizer"] == "extractive"
    notes = [r.getMessage() for r in caplog.records if "OPENAI_API_KEY" in r.getMessage()]
    assert notes == [
        "OPENAI_API_KEY (or COMPACT_OPENAI_API_KEY) is set but not used: "
        "COMPACT_SUMMARIZER=auto never summarizes with an OpenAI-compatible server; "
        "set COMPACT_SUMMARIZER=openai to use it"
    ]
    assert "sk-openai-from-the-shell" not in caplog.text
