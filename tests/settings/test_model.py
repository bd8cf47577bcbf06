from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.__main__ import main
from app.adapters.tokenizer import TiktokenTokenizer
from app.settings import Settings
from app.wiring.service import build_service


def test_strategy_settings_come_from_the_environment_and_reach_the_service_defaults(
    tmp_path: Path, tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {
        "COMPACT_DATA_DIR": str(tmp_path),
        "COMPACT_TAIL_KEEP_RECENT_ROUNDS": "4",
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
        defaults.options.tail_keep_recent_rounds,
        defaults.options.prune_keep_recent,
        defaults.options.prune_exclude_tools,
        defaults.options.prune_min_tokens,
        defaults.options.prune_clear_inputs,
        defaults.options.max_iterations,
        defaults.summary_cooldown_seconds,
    ) == (4, 7, ["Read", "read_file"], 5000, True, 3, 60.0)


def test_a_former_setting_name_still_sets_the_renamed_setting(
    tmp_path: Path, tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACT_KEEP_RECENT_ROUNDS", "6")
    settings = Settings(_env_file=None, data_dir=str(tmp_path))  # type: ignore[call-arg]
    assert settings.options.tail_keep_recent_rounds == 6
    defaults = build_service(settings, tokenizer).defaults
    assert defaults.options.tail_keep_recent_rounds == 6


def test_the_new_name_and_the_former_one_may_both_be_set_to_the_same_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPACT_KEEP_RECENT_ROUNDS", "6")
    monkeypatch.setenv("COMPACT_TAIL_KEEP_RECENT_ROUNDS", "6")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.options.tail_keep_recent_rounds == 6


def test_a_setting_and_its_former_name_with_different_values_fail_start_up_naming_both(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMPACT_KEEP_RECENT_ROUNDS", "6")
    monkeypatch.setenv("COMPACT_TAIL_KEEP_RECENT_ROUNDS", "8")
    with pytest.raises(ValidationError) as raised:
        Settings(_env_file=None)  # type: ignore[call-arg]
    assert "COMPACT_TAIL_KEEP_RECENT_ROUNDS='8'" in str(raised.value)
    assert "COMPACT_KEEP_RECENT_ROUNDS='6'" in str(raised.value)
    assert main(["serve"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: configuration:")
    assert "COMPACT_TAIL_KEEP_RECENT_ROUNDS" in error
    assert "COMPACT_KEEP_RECENT_ROUNDS" in error


def test_a_renamed_setting_is_still_set_by_its_field_name_beside_its_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its environment names are aliases; the field's own name keeps working for code
    and tests that build `Settings(...)` directly, and wins over the environment."""
    monkeypatch.setenv("COMPACT_KEEP_RECENT_ROUNDS", "6")
    settings = Settings(_env_file=None, tail_keep_recent_rounds=3)  # type: ignore[call-arg]
    assert settings.options.tail_keep_recent_rounds == 3


@pytest.mark.parametrize(
    ("values", "path"),
    [
        ({"summarizer": "openai", "openai_base_url": "http://127.0.0.1:8080/v1"}, "digest"),
        ({"summarizer": "openai", "openai_base_url": "http://localhost:11434/v1"}, "digest"),
        ({"summarizer": "openai", "openai_base_url": "http://[::1]:8080/v1"}, "digest"),
        ({"summarizer": "openai", "openai_base_url": "https://api.openai.com/v1"}, "transcript"),
        ({"summarizer": "openai", "openai_base_url": "http://10.0.0.5:8000/v1"}, "transcript"),
        ({"summarizer": "anthropic", "anthropic_api_key": "k"}, "transcript"),
        ({"summarizer": "extractive"}, "transcript"),
        (
            {
                "summarizer": "openai",
                "openai_base_url": "https://api.openai.com/v1",
                "summary_mode": "digest",
            },
            "digest",
        ),
        (
            {
                "summarizer": "openai",
                "openai_base_url": "http://127.0.0.1:8080/v1",
                "summary_mode": "transcript",
            },
            "transcript",
        ),
    ],
)
def test_auto_gives_the_digest_to_a_local_openai_compatible_server_only(
    values: dict[str, str], path: str
) -> None:
    settings = Settings(_env_file=None, **values)  # type: ignore[call-arg, arg-type]
    assert settings.summary_path == path
