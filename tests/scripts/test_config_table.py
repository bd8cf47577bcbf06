from __future__ import annotations

from pydantic import Field, SecretStr

from app.settings import Settings
from app.settings.names import every_setting
from scripts.config_table import (
    BEGIN,
    END,
    PAGE,
    REGENERATE,
    env_names,
    image_env,
    render,
    replace_table,
    show,
)


def test_the_configuration_page_is_generated_from_the_settings() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert page == replace_table(page, render(image_env())), (
        f"docs/configuration.md is out of date: run {REGENERATE}"
    )


def test_every_setting_is_a_row_with_its_variable_default_and_meaning() -> None:
    rows = render({"COMPACT_WORKDIR": "/workspace", "COMPACT_PORT": "8080"}).splitlines()
    assert len(rows) == 2 + len(every_setting())
    assert rows[:3] == [
        "| variable | default | meaning |",
        "|---|---|---|",
        "| `COMPACT_WORKDIR` | `.` (`/workspace` in the image) | "
        "the agent's work directory, read-only for us |",
    ]
    assert "| `COMPACT_PORT` | `8080` | port of `context-compact serve` |" in rows
    assert (
        "| `COMPACT_OPENAI_API_KEY` / `OPENAI_API_KEY` | unset | "
        "sent as `Authorization: Bearer`; local servers need none; never logged |"
    ) in rows
    assert any(row.startswith("| `ANTHROPIC_API_KEY` | unset | ") for row in rows)


def test_aliases_are_listed_in_the_order_pydantic_tries_them() -> None:
    fields = Settings.model_fields
    assert env_names("openai_api_key", fields["openai_api_key"]) == [
        "COMPACT_OPENAI_API_KEY",
        "OPENAI_API_KEY",
    ]
    assert env_names("job_workers", fields["job_workers"]) == ["COMPACT_JOB_WORKERS"]
    assert env_names("x", Field(1, validation_alias="X_ONLY")) == ["X_ONLY"]


def test_defaults_read_as_they_are_typed_in_the_environment() -> None:
    assert [show(v) for v in (None, SecretStr("k"), [], ["a.b", "c"], 60.0, 0.8, 3)] == [
        "unset",
        "unset",
        "empty",
        "`a.b,c`",
        "`60`",
        "`0.8`",
        "`3`",
    ]


def test_only_the_section_between_the_markers_is_replaced() -> None:
    readme = f"intro\n{BEGIN}\n| old |\n{END}\nrest\n"
    assert replace_table(readme, "| new |\n") == f"intro\n{BEGIN}\n| new |\n{END}\nrest\n"
