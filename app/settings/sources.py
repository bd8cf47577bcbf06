"""What `Settings` is built and read with, apart from its field declarations: the settings
declared beside the request options and how they are placed among the others (`place`), the
check that a renamed setting's names agree (`FormerNamesAgree`), and the test for a local
server. Kept apart so the settings modules hold declarations only.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Annotated, Any, get_origin

from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import InitErrorDetails, PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
)

from app.core.options import CompactOptions, setting_type, settings_of

# The settings declared beside the request options they default (`CompactOptions`):
# setting name → (request field, declaration).
DECLARED = settings_of(CompactOptions)
ENV_PREFIX = "COMPACT_"


def place(namespace: dict[str, Any], *names: str, placed: Iterable[str] = ()) -> None:
    """Adds the settings declared beside the request options to the class body being
    built, in the order given (their place in the configuration table). With no names:
    every one not placed yet, in this body or in `placed` (the parent classes' fields), so
    a new option's setting needs no line anywhere. `vars()` in a class body is the
    namespace the class is built from (in every CPython, before and after PEP 667), so
    pydantic sees these fields exactly as if they were written out."""
    annotations = namespace.setdefault("__annotations__", {})
    done = set(placed)
    for name in names or [n for n in DECLARED if n not in annotations and n not in done]:
        request_field, spec = DECLARED[name]
        kind = setting_type(CompactOptions, request_field)
        # A list setting is comma-separated text (`_split_commas`), not JSON.
        annotations[name] = Annotated[kind, NoDecode] if get_origin(kind) is list else kind
        namespace[name] = spec.field(ENV_PREFIX)


class FormerNamesAgree(PydanticBaseSettingsSource):
    """Refuses a renamed setting given under its name and a former name with different
    values: which one was meant cannot be told, so start-up fails naming both. Reads the
    variables as the environment sources saw them (their case rules and empty values)."""

    def __init__(
        self, settings_cls: type[BaseSettings], *sources: PydanticBaseSettingsSource
    ) -> None:
        super().__init__(settings_cls)
        self._sources = [s for s in sources if isinstance(s, EnvSettingsSource)]

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # contributes no values, only the check

    def __call__(self) -> dict[str, Any]:
        errors: list[InitErrorDetails] = []
        for _, spec in DECLARED.values():
            names = spec.env_names(ENV_PREFIX)
            for source in self._sources:
                given = {
                    name: value
                    for name in names
                    if (value := source.env_vars.get(_env_key(source, name))) is not None
                }
                if len(set(given.values())) > 1:
                    shown = ", ".join(f"{name}={value!r}" for name, value in given.items())
                    conflict = PydanticCustomError(
                        "former_name_conflict",
                        "one setting under two names with different values: {shown}; set one",
                        {"shown": shown},
                    )
                    errors.append(
                        InitErrorDetails(
                            type=conflict,
                            loc=(" / ".join(given),),
                            input=given,
                        )
                    )
        if errors:
            raise ValidationError.from_exception_data(self.settings_cls.__name__, errors)
        return {}


def _env_key(source: EnvSettingsSource, name: str) -> str:
    return name if source.case_sensitive else name.lower()


def is_loopback(host: str) -> bool:
    """Whether a server's host is this machine (a local model, likely on a CPU)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
