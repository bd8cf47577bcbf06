"""Configuration errors name the variable; unknown `COMPACT_*` variables are reported."""

from __future__ import annotations

import io

import pytest
from pydantic import ValidationError

from app.__main__ import main
from app.core.options import CompactOptions, settings_of
from app.core.toolkit import ToolResultLimits
from app.settings import Settings
from app.settings.model import SHOWN_AFTER
from app.settings.names import (
    NOT_SETTINGS,
    every_setting,
    explain,
    known_variables,
    unknown_variables,
)


def refused(**environ: str) -> str:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in environ.items():
            patch.setenv(name, value)
        with pytest.raises(ValidationError) as error:
            Settings(_env_file=None)  # type: ignore[call-arg]
    return explain(error.value)


def test_an_out_of_range_value_names_its_variable_and_the_value() -> None:
    assert refused(COMPACT_THRESHOLD="1.5") == (
        "COMPACT_THRESHOLD: Input should be less than or equal to 1 (got '1.5')"
    )


def test_every_problem_is_named_by_its_variable() -> None:
    text = refused(COMPACT_MAX_DEPTH="2", COMPACT_LOG_FORMAT="xml", COMPACT_PORT="port")
    assert sorted(line.split(":")[0] for line in text.split("; ")) == [
        "COMPACT_LOG_FORMAT",
        "COMPACT_MAX_DEPTH",
        "COMPACT_PORT",
    ]
    assert "threshold:" not in text


def test_a_rule_across_settings_names_both_variables() -> None:
    assert refused(COMPACT_THRESHOLD="0.9", COMPACT_OVERFLOW_THRESHOLD="0.5") == (
        "COMPACT_OVERFLOW_THRESHOLD must be >= COMPACT_THRESHOLD"
    )


def test_the_command_line_prints_the_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMPACT_CONTEXT_WINDOW", "-5")
    assert main(["count", "-"]) == 2
    assert capsys.readouterr().err == (
        "error: configuration: COMPACT_CONTEXT_WINDOW: Input should be greater than 0 (got '-5')\n"
    )


def test_a_misspelled_variable_is_reported_with_the_closest_name() -> None:
    environ = {"COMPACT_TRESHOLD": "0.5", "COMPACT_PORT": "9000", "HOME": "/root"}
    assert unknown_variables(environ) == [
        "COMPACT_TRESHOLD is not a setting and is ignored (did you mean COMPACT_THRESHOLD?)"
    ]


def test_an_unknown_variable_like_no_setting_is_reported_without_a_guess() -> None:
    assert unknown_variables({"COMPACT_FLUX_CAPACITOR": "1"}) == [
        "COMPACT_FLUX_CAPACITOR is not a setting and is ignored"
    ]


def test_aliases_former_names_and_the_projects_own_variables_are_known() -> None:
    environ = dict.fromkeys(
        [
            "COMPACT_ANTHROPIC_API_KEY",
            "COMPACT_OPENAI_BASE_URL",
            "COMPACT_KEEP_RECENT_ROUNDS",  # the former name of COMPACT_TAIL_KEEP_RECENT_ROUNDS
            *NOT_SETTINGS,
        ],
        "x",
    )
    assert unknown_variables(environ) == []
    assert "ANTHROPIC_API_KEY" in known_variables()


@pytest.mark.usefixtures("restore_logging")
def test_the_count_command_warns_about_an_unknown_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMPACT_CONTEXT_WINDOWS", "32000")
    monkeypatch.setattr("sys.stdin", io.StringIO('[{"role":"user","content":"hi"}]'))
    assert main(["count"]) == 0
    assert capsys.readouterr().err == (
        "warning: COMPACT_CONTEXT_WINDOWS is not a setting and is ignored "
        "(did you mean COMPACT_CONTEXT_WINDOW?)\n"
    )


def test_every_setting_is_listed_once_the_declared_ones_where_placed() -> None:
    names = [name for name, _ in every_setting()]
    declared = [*settings_of(ToolResultLimits), *settings_of(CompactOptions)]
    own = [name for name in Settings.model_fields if name not in ("options", "tool_results")]
    assert sorted(names) == sorted(own + declared)
    for after, placed in SHOWN_AFTER.items():
        start = names.index(after) + 1
        assert names[start : start + len(placed)] == list(placed)
    tool_results = list(settings_of(ToolResultLimits))
    start = names.index("job_lease_seconds") + 1
    assert names[start : start + len(tool_results)] == tool_results


def test_the_options_settings_placed_nowhere_come_last_in_declared_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fewer = {after: placed[1:] for after, placed in SHOWN_AFTER.items()}
    monkeypatch.setattr("app.settings.names.SHOWN_AFTER", fewer)
    placed = {name for names in fewer.values() for name in names}
    last = [name for name in settings_of(CompactOptions) if name not in placed]
    names = [name for name, _ in every_setting()]
    assert names[-len(last) :] == last
    assert len(names) == len(set(names))
