"""One gate on every path: every LLM summarizer the service builds is wrapped in
`CheckedSummarizer`, the only caller of `judge_summary` in `app/` — so `/compact`, jobs,
`tail`'s archive template, the digest path's questions and the proxy's background
compactions (which call the same service) hold answers to the same rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.service.checked import CheckedSummarizer
from app.settings import Settings
from app.wiring.service import build_summarizer

APP = Path(__file__).resolve().parents[2] / "app"


def test_judge_summary_is_called_in_one_place_only() -> None:
    callers = sorted(
        str(p.relative_to(APP))
        for p in APP.rglob("*.py")
        if re.search(r"\bjudge_summary\(", p.read_text(encoding="utf-8"))
        and not str(p.relative_to(APP)).startswith("core/gate/")
    )
    assert callers == ["service/checked.py"]


@pytest.mark.parametrize(
    "settings",
    [
        {"summarizer": "openai", "openai_base_url": "http://127.0.0.1:9/v1"},
        {"summarizer": "anthropic", "anthropic_api_key": "sk-ant-test"},
    ],
    ids=["openai", "anthropic"],
)
def test_every_llm_summarizer_is_checked(settings: dict[str, str], tmp_path: Path) -> None:
    built = build_summarizer(
        Settings(_env_file=None, workdir=str(tmp_path), **settings),  # type: ignore[call-arg]
        count=lambda text: len(text.split()),
    )
    assert isinstance(built, CheckedSummarizer)
