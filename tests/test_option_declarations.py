"""Each request option is declared once, and that declaration reaches every place it feeds.

A request option either declares its `COMPACT_*` setting beside it (`Setting` in
`CompactOptions`) or is listed in `REQUEST_ONLY` with the reason it has none. A declared
setting is a field of `Settings` with the declared default and description, it reaches the
service's defaults from the environment, and a request's value overrides it in `resolve`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.compaction import REQUEST_ONLY, CompactOptions
from app.core.option_setting import Setting, settings_of
from app.main import build_service
from app.service.defaults import Defaults, declared_defaults, server_options
from app.service.options import merged
from app.settings import Settings

DECLARED = settings_of(CompactOptions)
BY_FIELD = {field: (name, spec) for name, (field, spec) in DECLARED.items()}

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
    fields = set(CompactOptions.model_fields)
    assert set(BY_FIELD) | set(REQUEST_ONLY) == fields
    assert not set(BY_FIELD) & set(REQUEST_ONLY)
    assert all(reason.strip() for reason in REQUEST_ONLY.values())


def test_every_declared_setting_is_a_settings_field_with_its_declared_default() -> None:
    for name, (_, spec) in DECLARED.items():
        field = Settings.model_fields[name]
        assert field.description == spec.description, name
        assert field.get_default(call_default_factory=True) == declared_defaults()[name], name


def test_the_declared_defaults_are_the_service_defaults() -> None:
    built = server_options(Settings(_env_file=None).model_dump())  # type: ignore[call-arg]
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
        assert getattr(merged(sent, defaults), field) == value, field
        assert getattr(merged(CompactOptions(), defaults), field) == getattr(
            defaults.options, field
        )
