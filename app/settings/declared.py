"""The settings declared beside a model's fields (`setting(...)` in `CompactOptions` and
`ToolResultLimits`): such a model is one typed field of `Settings`
(`options: Declared[CompactOptions]`) that holds the server's value of each of its fields.

Each value comes from `Settings(<setting name>=...)`, else its own variable
(`COMPACT_<NAME>`, then its former names), and is validated with the setting's type and
bounds, not the request field's (a server may allow more than a request): an error's
location is (the field of `Settings`, the setting's name), which names the variable. A new
declared setting needs no line here or in `Settings`.
"""

from __future__ import annotations

from functools import cache, partial
from typing import Annotated, Any, TypeVar, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    ValidationError,
    create_model,
)
from pydantic_core import CoreSchema, InitErrorDetails, PydanticCustomError, core_schema
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
)

from app.core.options import setting_type, settings_of
from app.settings.sources import ENV_PREFIX, split_commas

M = TypeVar("M", bound=BaseModel)


class FromSettings:
    """Marks a field of `Settings` filled from its model's declared settings."""

    def __get_pydantic_core_schema__(
        self, source: type[BaseModel], handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        checked = handler.generate_schema(values_model(source))
        return core_schema.no_info_before_validator_function(
            partial(_values_given, source),
            core_schema.no_info_after_validator_function(partial(_model_of, source), checked),
            serialization=core_schema.plain_serializer_function_ser_schema(_dumped),
        )


# A model whose fields declare settings, as a field of `Settings` (typed as the model).
Declared = Annotated[M, FromSettings()]


@cache
def values_model(model: type[BaseModel]) -> type[BaseModel]:
    """The model `model`'s settings are validated with: one field per setting, named as the
    setting, with its type, default and bounds (a list is comma-separated text)."""
    fields: dict[str, Any] = {}
    for name, (field, spec) in settings_of(model).items():
        kind = setting_type(model, field)
        if get_origin(kind) is list:
            kind = Annotated[kind, BeforeValidator(split_commas)]
        if spec.check is not None:
            kind = Annotated[kind, AfterValidator(partial(_checked, spec.check))]
        fields[name] = (kind, spec.field(ENV_PREFIX))
    config = ConfigDict(validate_by_name=True, frozen=True)
    built: type[BaseModel] = create_model(f"{model.__name__}Settings", __config__=config, **fields)
    return built


def declared_fields(settings_cls: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """The fields of `settings_cls` filled from declared settings, with their models."""
    return {
        name: info.annotation
        for name, info in settings_cls.model_fields.items()
        if isinstance(info.annotation, type)
        and any(isinstance(meta, FromSettings) for meta in info.metadata)
    }


def _checked(check: Any, value: object) -> object:
    check(value)
    return value


def _values_given(model: type[BaseModel], value: object) -> object:
    """A model instance given as the field's value (the default, or a test's): the values
    it sets, by setting name."""
    if not isinstance(value, model):
        return value
    return {
        name: getattr(value, field)
        for name, (field, _) in settings_of(model).items()
        if field in value.model_fields_set
    }


def _model_of(model: type[M], values: BaseModel) -> M:
    settings = settings_of(model).items()
    return model.model_construct(**{field: getattr(values, name) for name, (field, _) in settings})


def _dumped(value: BaseModel) -> dict[str, Any]:
    return value.model_dump()


class DeclaredSource(PydanticBaseSettingsSource):
    """Reads every declared setting: `Settings(<name>=...)`, else the environment sources in
    order (their case rules and empty values). A renamed setting given under its name and a
    former name with different values is refused: which one was meant cannot be told, so
    start-up fails naming both. Every declared field gets a value, its settings' defaults
    filling what is not set."""

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        init: PydanticBaseSettingsSource,
        *sources: PydanticBaseSettingsSource,
    ) -> None:
        super().__init__(settings_cls)
        self._init = init.init_kwargs if isinstance(init, InitSettingsSource) else {}
        self._sources = [s for s in sources if isinstance(s, EnvSettingsSource)]

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # all is read in `__call__`

    def __call__(self) -> dict[str, Any]:
        errors: list[InitErrorDetails] = []
        found: dict[str, Any] = {}
        for field, model in declared_fields(self.settings_cls).items():
            found[field] = {}
            for name, (_, spec) in settings_of(model).items():
                given = self._given(name, spec.env_names(ENV_PREFIX), errors)
                if given:
                    found[field][name] = given[0]
        if errors:
            raise ValidationError.from_exception_data(self.settings_cls.__name__, errors)
        return found

    def _given(
        self, name: str, variables: tuple[str, ...], errors: list[InitErrorDetails]
    ) -> list[object]:
        """The values given for one setting, first the one that counts."""
        given: list[object] = [self._init[name]] if name in self._init else []
        for source in self._sources:
            seen = _variables(source, variables)
            if len(set(seen.values())) > 1:
                errors.append(_conflict(seen))
            given.extend(list(seen.values())[:1])
        return given


def _variables(source: EnvSettingsSource, names: tuple[str, ...]) -> dict[str, str]:
    """The variables of `names` a source has, in that order."""
    found = {}
    for name in names:
        value = source.env_vars.get(name if source.case_sensitive else name.lower())
        if value is not None:
            found[name] = value
    return found


def _conflict(given: dict[str, str]) -> InitErrorDetails:
    shown = ", ".join(f"{name}={value!r}" for name, value in given.items())
    error = PydanticCustomError(
        "former_name_conflict",
        "one setting under two names with different values: {shown}; set one",
        {"shown": shown},
    )
    return InitErrorDetails(type=error, loc=(" / ".join(given),), input=given)
