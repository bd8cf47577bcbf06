"""The settings declared beside a model's fields reach `Settings` as one typed field of that
model, read from each setting's own variable by one generic reader: a model with a new
declared setting needs no line in `app/settings/`."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel, Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from app.core.options import CompactOptions, setting
from app.core.toolkit import ToolResultLimits
from app.settings import Settings
from app.settings.declared import Declared, DeclaredSource
from app.settings.names import explain


class Knobs(BaseModel):
    """A request model of its own, as a new family of options would be."""

    depth: Annotated[int | None, setting("knob_depth", 3, "how deep", ge=1)] = Field(None, le=5)
    names: Annotated[
        list[str] | None,
        setting("knob_names", description="which", default_factory=list, formerly=("names",)),
    ] = None
    width: Annotated[int, setting("knob_width", description="how wide", gt=0)] = Field(7, le=9)
    untouched: str | None = None


class KnobSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="COMPACT_", extra="ignore", frozen=True)

    knobs: Declared[Knobs]

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        declared = DeclaredSource(settings_cls, init_settings, env_settings)
        return init_settings, declared, env_settings


def knobs(monkeypatch: pytest.MonkeyPatch, **given: object) -> Knobs:
    return KnobSettings(**given).knobs  # type: ignore[arg-type]


def test_with_nothing_set_each_field_holds_its_settings_default_or_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = knobs(monkeypatch)
    assert (found.depth, found.names, found.width, found.untouched) == (3, [], 7, None)
    assert found.model_fields_set == {"depth", "names", "width"}


def test_each_setting_is_read_from_its_variable_with_the_settings_bounds_not_the_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPACT_KNOB_DEPTH", "40")  # over the request's 5: a server may allow more
    monkeypatch.setenv("COMPACT_KNOB_NAMES", "a, b")
    monkeypatch.setenv("COMPACT_KNOB_WIDTH", "12")
    found = knobs(monkeypatch)
    assert (found.depth, found.names, found.width) == (40, ["a", "b"], 12)


def test_a_keyword_argument_by_the_settings_name_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPACT_KNOB_DEPTH", "40")
    assert knobs(monkeypatch, knob_depth=2).depth == 2


def test_a_former_name_is_read_and_may_not_disagree_with_the_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPACT_NAMES", "x")
    assert knobs(monkeypatch).names == ["x"]
    monkeypatch.setenv("COMPACT_KNOB_NAMES", "y")
    with pytest.raises(ValidationError) as raised:
        knobs(monkeypatch)
    assert explain(raised.value) == (
        "COMPACT_KNOB_NAMES / COMPACT_NAMES: one setting under two names with different "
        "values: COMPACT_KNOB_NAMES='y', COMPACT_NAMES='x'; set one"
    )


def test_a_value_out_of_the_settings_bounds_is_refused_at_the_settings_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPACT_KNOB_WIDTH", "0")
    with pytest.raises(ValidationError) as raised:
        knobs(monkeypatch)
    (error,) = raised.value.errors()
    assert error["loc"] == ("knobs", "knob_width")


def test_a_model_given_whole_sets_what_it_sets_and_the_rest_keeps_its_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = knobs(monkeypatch, knobs=Knobs(width=9))
    assert (found.depth, found.width) == (3, 9)


def test_the_server_settings_hold_the_options_and_the_tool_result_limits() -> None:
    settings = Settings(_env_file=None, threshold=0.5, tool_result_glob_hits=3)  # type: ignore[call-arg]
    assert settings.options.threshold == 0.5
    assert settings.tool_results == ToolResultLimits(glob_hits=3)
    assert isinstance(settings.options, CompactOptions)
    assert settings.model_dump()["tool_results"]["glob_hits"] == 3


def test_a_tool_result_limit_out_of_bounds_names_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPACT_TOOL_RESULT_READ_LINES", "0")
    with pytest.raises(ValidationError) as raised:
        Settings(_env_file=None)  # type: ignore[call-arg]
    assert explain(raised.value) == (
        "COMPACT_TOOL_RESULT_READ_LINES: Input should be greater than or equal to 1 (got '0')"
    )


def test_an_unknown_read_tool_preset_is_refused_at_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPACT_READ_TOOLS", "no_such_agent")
    with pytest.raises(ValidationError) as raised:
        Settings(_env_file=None)  # type: ignore[call-arg]
    assert explain(raised.value).startswith("COMPACT_READ_TOOLS: ")
