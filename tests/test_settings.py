from __future__ import annotations

from pathlib import Path

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.main import build_service
from app.settings import Settings


def test_strategy_settings_come_from_the_environment_and_reach_the_service_defaults(
    tmp_path: Path, tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {
        "COMPACT_DATA_DIR": str(tmp_path),
        "COMPACT_KEEP_RECENT_ROUNDS": "4",
        "COMPACT_PRUNE_KEEP_RECENT": "7",
        "COMPACT_PRUNE_EXCLUDE_TOOLS": "Read, read_file",
        "COMPACT_PRUNE_MIN_TOKENS": "5000",
        "COMPACT_PRUNE_CLEAR_INPUTS": "true",
        "COMPACT_MAX_ITERATIONS": "3",
        "COMPACT_SUMMARY_COOLDOWN_SECONDS": "60",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    defaults = build_service(settings, tokenizer).defaults
    assert (
        defaults.options.keep_recent_rounds,
        defaults.options.prune_keep_recent,
        defaults.options.prune_exclude_tools,
        defaults.options.prune_min_tokens,
        defaults.options.prune_clear_inputs,
        defaults.options.max_iterations,
        defaults.summary_cooldown_seconds,
    ) == (4, 7, ["Read", "read_file"], 5000, True, 3, 60.0)
