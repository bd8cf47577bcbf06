"""Each request option is declared once, and that declaration reaches every place it feeds.

A request option either declares its `COMPACT_*` setting beside it (`Setting` in
`CompactOptions`) or is listed in `REQUEST_ONLY` with the reason it has none. A declared
setting is a field of `Settings` with the declared default and description, it reaches the
service's defaults from the environment, and a request's value overrides it in the one
resolver of every parameters record (`resolve_params`).
A renamed option's former request name (`former_name`) and former setting names
(`formerly`) are declared beside it too, and behave as the option under its new name.
"""

from __future__ import annotations

from dataclasses import make_dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.options.compact import (
    FORMER_NAMES,
    REQUEST_ONLY,
    CompactOptions,
    former_name_warnings,
)
from app.core.options.declaration import FormerName, Setting, settings_of
from app.core.options.params import DecideParams, RunParams, options_read, resolve_params
from app.service.defaults import Defaults
from app.service.registry import STRATEGIES
from app.settings.model import ENV_PREFIX, Settings
from app.settings.names import every_setting
from app.wiring.service import build_service

DECLARED = settings_of(CompactOptions)
BY_FIELD = {field: (name, spec) for name, (field, spec) in DECLARED.items()}
OPTIONS = [name for name in CompactOptions.model_fields if name not in FORMER_NAMES]
# A parameters record of every option, as a strategy's would read them.
Every = make_dataclass("Every", [(name, Any, None) for name in OPTIONS], frozen=True)


def resolved(sent: CompactOptions, defaults: Defaults) -> dict[str, object]:
    return dict(vars(resolve_params(Every, sent, defaults.options)))


def as_resolved(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


# A value unlike the default for each declared setting: (environment text, parsed value).
OTHER = {
    "read_tools": ("claude_code", ["claude_code"]),
    "prune_exclude_tools": ("Read, Bash", ["Read", "Bash"]),
    "ledger_budget": ("700", 700),
    "threshold": ("0.5", 0.5),
}


def other_value(name: str, spec: Setting) -> tuple[str, object]:
    if name in OTHER:
        return OTHER[name]
    if isinstance(spec.default, bool):
        return str(not spec.default).lower(), not spec.default
    assert isinstance(spec.default, int), name
    value = spec.default + 1
    return str(value), value


def test_every_request_option_has_a_setting_or_a_reason_for_none() -> None:
    fields = set(CompactOptions.model_fields) - set(FORMER_NAMES)
    assert set(BY_FIELD) | set(REQUEST_ONLY) == fields
    assert not set(BY_FIELD) & set(REQUEST_ONLY)
    assert all(reason.strip() for reason in REQUEST_ONLY.values())


def test_every_declared_setting_is_a_setting_with_its_declared_default() -> None:
    rows = dict(every_setting())
    server = Settings(_env_file=None).options  # type: ignore[call-arg]
    for name, (option, spec) in DECLARED.items():
        field = rows[name]
        assert field.description == spec.field(ENV_PREFIX).description, name
        assert (field.description or "").startswith(spec.description), name
        assert field.get_default(call_default_factory=True) == spec.default_value, name
        assert getattr(server, option) == spec.default_value, name


def test_the_declared_defaults_are_the_service_defaults() -> None:
    built = Settings(_env_file=None).options  # type: ignore[call-arg]
    assert built == Defaults().options
    for field, (_, spec) in BY_FIELD.items():
        assert (getattr(built, field) is None) == spec.optional, field


def test_every_declared_setting_reaches_the_service_from_the_environment(
    tmp_path: Path, tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACT_DATA_DIR", str(tmp_path))
    wanted = {}
    for name, (field, spec) in DECLARED.items():
        text, value = other_value(name, spec)
        monkeypatch.setenv(f"COMPACT_{name.upper()}", text)
        wanted[field] = value
    if "overflow_threshold" not in DECLARED:
        monkeypatch.setenv("COMPACT_OVERFLOW_THRESHOLD", "0.5")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    options = build_service(settings, tokenizer).defaults.options
    assert {field: getattr(options, field) for field in wanted} == wanted


def test_a_request_value_overrides_every_declared_setting_and_none_falls_back() -> None:
    defaults = Defaults()
    for field, (name, spec) in BY_FIELD.items():
        _, value = other_value(name, spec)
        sent = CompactOptions.model_validate({field: value})
        assert resolved(sent, defaults)[field] == as_resolved(value), field
        assert resolved(CompactOptions(), defaults)[field] == as_resolved(
            getattr(defaults.options, field)
        )


def test_every_option_is_read_by_a_strategys_parameters_or_the_services() -> None:
    read = {option for s in STRATEGIES.values() for option in options_read(s.params)}
    read |= options_read(RunParams) | options_read(DecideParams)
    assert read == set(OPTIONS) - {"strategy"}


# The options renamed to say their strategy, and their former request names.
RENAMED = {
    "keep_recent_rounds": "tail_keep_recent_rounds",
    "keep_recent": "selective_keep_recent",
    "tool_call_threshold": "selective_tool_call_threshold",
    "tool_result_threshold": "selective_tool_result_threshold",
    "preview_tokens": "selective_preview_tokens",
    "fallback_to_summary": "selective_fallback_to_summary",
}


def test_the_renamed_options_keep_their_former_names() -> None:
    assert FORMER_NAMES == RENAMED
    for option in RENAMED.values():
        setting_name, _ = BY_FIELD[option]
        assert setting_name == option  # request option `x` <-> setting `COMPACT_X`
    assert BY_FIELD["tail_keep_recent_rounds"][1].formerly == ("keep_recent_rounds",)


def test_every_option_of_a_strategy_says_its_strategy_on_both_sides() -> None:
    for strategy in ("tail", "selective", "prune"):
        described = [
            field
            for field, (_, spec) in BY_FIELD.items()
            if spec.description.startswith(f"`{strategy}`")
        ]
        assert described, strategy
        for field in described:
            assert field.startswith(f"{strategy}_"), field
            assert BY_FIELD[field][0] == field


def test_a_former_name_is_its_option_deprecated_with_the_same_type_default_and_bounds() -> None:
    fields = CompactOptions.model_fields
    order = list(fields)
    for former, option in FORMER_NAMES.items():
        old, new = fields[former], fields[option]
        assert old.annotation == new.annotation, former
        assert old.default == new.default, former
        bounds = [m for m in new.metadata if not isinstance(m, Setting)]
        assert [m for m in old.metadata if not isinstance(m, FormerName)] == bounds, former
        assert old.deprecated, former
        assert f"`{option}`" in (old.description or ""), former
        assert not new.deprecated, option
        assert order.index(option) < order.index(former)  # validated first: the conflict check


def test_a_value_under_a_former_name_is_the_options_value_and_the_only_one_kept() -> None:
    defaults = Defaults()
    for former, option in FORMER_NAMES.items():
        name, spec = BY_FIELD[option]
        _, value = other_value(name, spec)
        sent = CompactOptions.model_validate({former: value})
        assert getattr(sent, option) == value, former
        assert sent.model_dump(exclude_unset=True) == {option: value}, former
        assert sent.former_names_used == (former,)
        assert former_name_warnings(sent) == [
            f"option `{former}` is deprecated: it is now `{option}`"
        ]
        assert resolved(sent, defaults)[option] == value, former
        new = CompactOptions.model_validate({option: value})
        assert resolved(sent, defaults) == resolved(new, defaults), former
        assert new.former_names_used == ()
        assert former_name_warnings(new) == []


def test_a_former_name_beside_its_option_needs_the_same_value() -> None:
    for former, option in FORMER_NAMES.items():
        name, spec = BY_FIELD[option]
        _, value = other_value(name, spec)
        both = CompactOptions.model_validate({former: value, option: value})
        assert getattr(both, option) == value
        with pytest.raises(ValidationError) as raised:
            CompactOptions.model_validate({former: value, option: spec.default})
        (error,) = raised.value.errors()
        assert error["loc"] == (former,)
        assert f"`{option}`" in error["msg"]


def test_a_former_setting_name_is_read_after_the_settings_own() -> None:
    for name, (_, spec) in DECLARED.items():
        names = spec.env_names(ENV_PREFIX)
        assert names[0] == f"COMPACT_{name.upper()}"
        alias = dict(every_setting())[name].validation_alias
        if spec.formerly:
            assert alias is not None
            assert list(getattr(alias, "choices", ())) == list(names)
            assert all(f"`{n}`" in spec.field(ENV_PREFIX).description for n in names[1:])
        else:
            assert alias is None, name
