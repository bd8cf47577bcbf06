"""`COMPACT_RETENTION` is a duration (`30d`, `12h`, `45m`, `10s`, `0`); anything else stops
the start-up with a line naming the variable."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.__main__ import main
from app.settings import Settings


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("30d", timedelta(days=30)),
        ("12h", timedelta(hours=12)),
        ("45m", timedelta(minutes=45)),
        ("10s", timedelta(seconds=10)),
        (" 2D ", timedelta(days=2)),
        ("0", timedelta(0)),
    ],
)
def test_a_duration_is_read_in_its_unit(
    monkeypatch: pytest.MonkeyPatch, text: str, kept: timedelta
) -> None:
    monkeypatch.setenv("COMPACT_RETENTION", text)
    assert Settings(_env_file=None).retention == kept  # type: ignore[call-arg]


def test_the_defaults_keep_thirty_days_and_sweep_hourly() -> None:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert settings.retention == timedelta(days=30)
    assert settings.retention_sweep_seconds == 3600


@pytest.mark.parametrize("text", ["30", "1.5h", "-1d", "30 days", "", "1w"])
def test_a_bad_duration_stops_the_start_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    monkeypatch.setenv("COMPACT_RETENTION", text)
    assert main(["serve"]) == 2
    assert capsys.readouterr().err == (
        "error: configuration: COMPACT_RETENTION: expected a duration: a whole number and a"
        " unit, d, h, m or s (`30d`, `12h`, `45m`, `10s`), or `0` to keep everything"
        f" (got {text!r})\n"
    )
