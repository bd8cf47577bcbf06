"""The server-wide setting behind a request option, declared beside the option itself.

A request option of `CompactOptions` that the server also reads from its environment carries
a `Setting` in its annotation: the setting's name, default, bounds and description. It is
the one declaration of that knob: `app.settings` builds its `COMPACT_*` field from it, the
README's configuration table and the OpenAPI document follow the two models. Pydantic
ignores the marker when it validates or documents the request field.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field


@dataclass(frozen=True)
class Setting:
    """`COMPACT_<name>`: the default of a request option when the request leaves it out.

    `optional`: the setting itself may be unset (its type keeps `None`); `bounds` are the
    setting's own (`ge`, `gt`, `le`), which may differ from the request field's."""

    name: str
    default: object = None
    description: str = ""
    default_factory: Callable[[], object] | None = None
    optional: bool = False
    bounds: Mapping[str, float] = field(default_factory=dict)

    def field(self) -> Any:
        """The pydantic field of the setting (typed `Any` as `Field` is)."""
        known: dict[str, Any] = {"description": self.description, **self.bounds}
        if self.default_factory is not None:
            return Field(default_factory=self.default_factory, **known)
        return Field(self.default, **known)


def setting(
    name: str,
    default: object = None,
    description: str = "",
    *,
    default_factory: Callable[[], object] | None = None,
    optional: bool = False,
    **bounds: float,
) -> Setting:
    return Setting(name, default, description, default_factory, optional, bounds)


def settings_of(model: type[BaseModel]) -> dict[str, tuple[str, Setting]]:
    """Each declared setting of `model`'s fields: setting name → (request field, setting)."""
    found: dict[str, tuple[str, Setting]] = {}
    for name, info in model.model_fields.items():
        for meta in info.metadata:
            if isinstance(meta, Setting):
                found[meta.name] = (name, meta)
    return found


def setting_type(model: type[BaseModel], request_field: str) -> Any:
    """The setting's type: the request field's without `None` (kept when `optional`)."""
    annotation = model.model_fields[request_field].annotation
    declared = settings_of(model)
    spec = next(s for f, s in declared.values() if f == request_field)
    if spec.optional:
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kept = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return kept[0] if len(kept) == 1 else typing.Union[tuple(kept)]  # noqa: UP007
    return annotation
