"""The environment variables of the settings, by the names a reader types: configuration
errors name the variable (`COMPACT_THRESHOLD`), not the field (`threshold`), and a
`COMPACT_*` variable that no setting reads is reported at start-up instead of ignored (a
misspelled variable is a default silently in force).

Takes the environment as an argument, so tests pass a dict.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from pydantic import AliasChoices, ValidationError
from pydantic.fields import FieldInfo

from app.settings.declared import declared_fields, values_model
from app.settings.model import ENV_PREFIX, SHOWN_AFTER, Settings

# `COMPACT_*` variables that are not server settings but belong to the project: the clients'
# and examples' address and token, the PostgreSQL tests' server, the compose database password.
NOT_SETTINGS = frozenset({"COMPACT_URL", "COMPACT_TEST_POSTGRES", "COMPACT_DB_PASSWORD"})


def env_names(name: str, field: FieldInfo) -> list[str]:
    """The variables a field is read from, in the order pydantic tries them."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [choice for choice in alias.choices if isinstance(choice, str)]
    if isinstance(alias, str):
        return [alias]
    return [(ENV_PREFIX + name).upper()]


def every_setting() -> list[tuple[str, FieldInfo]]:
    """Every setting, as the configuration table lists them: the fields of `Settings` in
    order, each followed by the declared settings `SHOWN_AFTER` it, and in place of a field
    of declared settings (`options`, `tool_results`) those of its settings shown nowhere
    else."""
    placed = {name for names in SHOWN_AFTER.values() for name in names}
    models = declared_fields(Settings)
    declared = {
        name: info
        for model in models.values()
        for name, info in values_model(model).model_fields.items()
    }
    found: list[tuple[str, FieldInfo]] = []
    for name, field in Settings.model_fields.items():
        if name in models:
            own = values_model(models[name]).model_fields
            found += [(n, info) for n, info in own.items() if n not in placed]
        else:
            found.append((name, field))
        found += [(n, declared[n]) for n in SHOWN_AFTER.get(name, ())]
    return found


def known_variables() -> frozenset[str]:
    """Every variable a setting is read from (former names included), and `NOT_SETTINGS`."""
    names = {n for name, field in every_setting() for n in env_names(name, field)}
    return frozenset(names | NOT_SETTINGS)


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """A line for each `COMPACT_*` variable no setting reads, with the closest known name."""
    known = known_variables()
    lines = []
    for name in sorted(n for n in environ if n.upper().startswith(ENV_PREFIX)):
        if name.upper() in known:
            continue
        close = difflib.get_close_matches(name.upper(), sorted(known), n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]}?)" if close else ""
        lines.append(f"{name} is not a setting and is ignored{hint}")
    return lines


def variable_of(location: tuple[str | int, ...]) -> str:
    """The variable behind a setting's error location: a field's own name, or an alias; a
    declared setting's is (the field of `Settings`, its name)."""
    name, *inner = map(str, location)
    models = declared_fields(Settings)
    if name in models and inner:
        name, fields = inner[0], values_model(models[name]).model_fields
    else:
        fields = Settings.model_fields
    field = fields.get(name)
    return env_names(name, field)[0] if field is not None else name


def explain(error: ValidationError) -> str:
    """One line per problem, each starting with the variable at fault."""
    return "; ".join(_lines(error.errors(include_url=False)))


def _lines(errors: Iterable[Mapping[str, object]]) -> Iterable[str]:
    for item in errors:
        loc = item.get("loc") or ()
        where = variable_of(loc) if isinstance(loc, tuple) and loc else None
        message = str(item.get("msg", "invalid")).removeprefix("Value error, ")
        shown = item.get("input")
        value = f" (got {shown!r})" if where and isinstance(shown, str) else ""
        yield f"{where}: {message}{value}" if where else message
