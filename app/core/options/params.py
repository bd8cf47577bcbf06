"""Typed parameters: each strategy's record of the options it reads, and the one resolver.

A parameters record is a frozen dataclass whose fields are named after `CompactOptions`
fields (or are records themselves, for a group of options a shared step reads). One
generic function fills any record: the request's value, else the server's (its settings),
else the field's own default; a field no layer sets and with no default is a wiring bug.
So an option reaches the code that reads it by its type, never by a hand-typed name.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from app.core.decide import Thresholds
from app.core.history import Vocabulary
from app.core.options.compact import CompactOptions
from app.core.restore import FileReadTool, RestoreLimits, read_tools_from

P = TypeVar("P")


def resolve_params(kind: type[P], request: CompactOptions, server: CompactOptions) -> P:
    """`kind` filled from request → server → the field's default (a list becomes a tuple).
    Only a missing value (None) falls through, so an explicit 0 or false is honoured."""
    hints = typing.get_type_hints(kind)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(kind):  # type: ignore[arg-type]
        hint = hints[field.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            values[field.name] = resolve_params(hint, request, server)
            continue
        if field.name not in CompactOptions.model_fields:
            raise TypeError(f"{kind.__name__}.{field.name} is not a request option")
        value = getattr(request, field.name)
        if value is None:
            value = getattr(server, field.name)
        if value is None:
            if field.default is dataclasses.MISSING:
                raise ValueError(f"the server has no default for {field.name}")
            continue
        values[field.name] = tuple(value) if isinstance(value, list) else value
    return kind(**values)


def options_read(kind: type[Any]) -> frozenset[str]:
    """The request options a record reads, its nested records' included."""
    hints = typing.get_type_hints(kind)
    found: set[str] = set()
    for field in dataclasses.fields(kind):
        hint = hints[field.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            found |= options_read(hint)
        else:
            found.add(field.name)
    return frozenset(found)


@dataclass(frozen=True)
class DecideParams:
    """What decides whether to compact at all."""

    context_window: int
    threshold: float
    min_messages: int

    def thresholds(self, overflow_threshold: float) -> Thresholds:
        return Thresholds(
            context_window=self.context_window,
            threshold=self.threshold,
            overflow_threshold=overflow_threshold,
            min_messages=self.min_messages,
        )


@dataclass(frozen=True)
class RunParams:
    """What the service reads around any strategy: the session's limit, the fallbacks."""

    max_iterations: int
    fallback: bool = True


@dataclass(frozen=True)
class SummaryParams:
    """The summary and its fact ledger (the server's word limit and ledger budget already
    follow the request's window: `Defaults.server_options_for`)."""

    max_summary_words: int
    summary_input_budget: int
    ledger_budget: int
    file_tools: tuple[str, ...] = ()

    @cached_property
    def vocabulary(self) -> Vocabulary:
        return Vocabulary.from_specs(self.file_tools)


@dataclass(frozen=True)
class RestoreParams:
    """The recently read files restored after a compaction."""

    max_restore_files: int
    max_restore_tokens_per_file: int
    max_restore_tokens_total: int
    read_tools: tuple[str, ...]

    @property
    def limits(self) -> RestoreLimits:
        return RestoreLimits(
            max_files=self.max_restore_files,
            max_tokens_per_file=self.max_restore_tokens_per_file,
            max_tokens_total=self.max_restore_tokens_total,
        )

    @cached_property
    def tools(self) -> tuple[FileReadTool, ...]:
        return read_tools_from(self.read_tools)
