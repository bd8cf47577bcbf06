"""The server-wide setting behind a model's field, declared beside the field itself.

A field of a request model (`CompactOptions`, `ToolResultLimits`) that the server also reads
from its environment carries a `Setting` in its annotation: the setting's name, default,
bounds and description. It is the one declaration of that knob: the model becomes one field
of `Settings` (app/settings/declared.py reads each of its `COMPACT_*` variables), the
configuration table and the OpenAPI document follow the two. Pydantic ignores the marker
when it validates or documents the request field.

An option that was renamed keeps its former names working, declared here too: a setting's
former names (`formerly`) are read from the environment after its own, and a request
field's former name is a deprecated field made by `former_name` right after the option,
with the option's type, default and bounds, so old clients and old configurations go on
working while the documents point at the new name.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import AliasChoices, BaseModel, Field
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Setting:
    """`COMPACT_<name>`: the server's value of a field when the request leaves it out.

    `default`: unset (None, no factory, not `optional`), the field's own default, so a
    field that has one writes it once; `optional`: the setting itself may be unset (its
    type keeps `None`); `bounds` are the setting's own (`ge`, `gt`, `le`), which may differ
    from the request field's; `formerly`: the setting's former names, still read
    (deprecated) after its own; `check`: a test of the value beyond its type and bounds
    (raises `ValueError`)."""

    name: str
    default: object = None
    description: str = ""
    default_factory: Callable[[], object] | None = None
    optional: bool = False
    bounds: Mapping[str, float] = field(default_factory=dict)
    formerly: tuple[str, ...] = ()
    check: Callable[[Any], object] | None = None

    @property
    def default_value(self) -> object:
        return self.default_factory() if self.default_factory is not None else self.default

    def env_names(self, prefix: str) -> tuple[str, ...]:
        """The environment variables it is read from, in order: its own name, then its
        former ones."""
        return tuple(f"{prefix}{name}".upper() for name in (self.name, *self.formerly))

    def field(self, prefix: str) -> Any:
        """The pydantic field of the setting (typed `Any` as `Field` is); `prefix` is the
        settings' environment prefix, which pydantic does not add to explicit aliases."""
        known: dict[str, Any] = {"description": self.description, **self.bounds}
        if self.formerly:
            former = ", ".join(f"`{n}`" for n in self.env_names(prefix)[1:])
            known["description"] += (
                f" ({former}: its former name, deprecated; both set to different values "
                "fail start-up)"
            )
            known["validation_alias"] = AliasChoices(*self.env_names(prefix))
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
    formerly: tuple[str, ...] = (),
    check: Callable[[Any], object] | None = None,
    **bounds: float,
) -> Setting:
    return Setting(name, default, description, default_factory, optional, bounds, formerly, check)


def settings_of(model: type[BaseModel]) -> dict[str, tuple[str, Setting]]:
    """Each declared setting of `model`'s fields, in the fields' order: setting name →
    (the model's field, setting); a setting that declares no default has its field's."""
    found: dict[str, tuple[str, Setting]] = {}
    for name, info in model.model_fields.items():
        for meta in info.metadata:
            if isinstance(meta, Setting):
                found[meta.name] = (name, _with_field_default(meta, info))
    return found


def _with_field_default(spec: Setting, info: FieldInfo) -> Setting:
    unset = spec.default is None and spec.default_factory is None and not spec.optional
    if not unset or info.default in (None, PydanticUndefined):
        return spec
    return dataclasses.replace(spec, default=info.default)


def defaults_of(model: type[M]) -> M:
    """`model` with each declared setting at its default (its other fields at theirs):
    the server's value when no variable is set. Not validated against the request's
    bounds: a server may allow more than a request."""
    values: dict[str, Any] = {f: spec.default_value for f, spec in settings_of(model).values()}
    return model.model_construct(**values)


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


@dataclass(frozen=True)
class FormerName:
    """Marks a request field as the former name of the option `replacement`."""

    replacement: str


def former_name(namespace: Mapping[str, Any], replacement: str) -> Any:
    """The field of an option's former name, for a model's class body right after the
    option: the option's default and bounds, deprecated, its description naming the
    replacement. `namespace` is the class body's `vars()`, which holds the option's `Field`
    (its annotation is still text there, so the former name's type is written out and a
    test holds it equal)."""
    option: FieldInfo = namespace[replacement]
    info: FieldInfo = Field(
        option.default,
        description=(
            f"Deprecated: the former name of `{replacement}`, still accepted with the same "
            f"meaning and bounds. Sending both with different values is a 422."
        ),
        deprecated=f"the former name of `{replacement}`",
    )
    info.metadata = [*option.metadata, FormerName(replacement)]
    return info


def former_names(model: type[BaseModel]) -> dict[str, str]:
    """Each former name among `model`'s fields: former name → the option replacing it."""
    return {
        name: meta.replacement
        for name, info in model.model_fields.items()
        for meta in info.metadata
        if isinstance(meta, FormerName)
    }
