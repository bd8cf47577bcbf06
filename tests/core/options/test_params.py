"""One resolver fills every parameters record: request over server over the field's default."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.core.history.file_ops import Vocabulary
from app.core.options.compact import CompactOptions
from app.core.options.params import RestoreParams, SummaryParams, options_read, resolve_params
from app.core.restore.plan import RestoreLimits, read_tools_from

SERVER = CompactOptions.model_construct(
    prune_keep_recent=3, prune_clear_inputs=False, max_iterations=0, read_tools=["read_file.path"]
)


@dataclass(frozen=True)
class Inner:
    prune_clear_inputs: bool


@dataclass(frozen=True)
class Outer:
    prune_keep_recent: int
    inner: Inner
    fallback: bool = True
    file_tools: tuple[str, ...] = ()


def test_a_request_value_wins_over_the_servers() -> None:
    sent = CompactOptions(prune_keep_recent=9, prune_clear_inputs=True)
    assert resolve_params(Outer, sent, SERVER) == Outer(9, Inner(True))


def test_a_missing_value_takes_the_servers_then_the_fields_default() -> None:
    assert resolve_params(Outer, CompactOptions(), SERVER) == Outer(3, Inner(False), True, ())


def test_zero_and_false_sent_by_the_request_are_honoured() -> None:
    sent = CompactOptions(prune_keep_recent=0, fallback=False)
    assert resolve_params(Outer, sent, SERVER) == Outer(0, Inner(False), False)


def test_a_list_option_arrives_as_a_tuple() -> None:
    sent = CompactOptions(file_tools=["save_note.target:created"])
    assert resolve_params(Outer, sent, SERVER).file_tools == ("save_note.target:created",)


def test_a_field_that_is_no_request_option_is_a_wiring_error() -> None:
    @dataclass(frozen=True)
    class Misspelt:
        prune_keep_recnt: int

    with pytest.raises(TypeError, match=r"Misspelt\.prune_keep_recnt is not a request option"):
        resolve_params(Misspelt, CompactOptions(), SERVER)


def test_an_option_no_layer_sets_and_without_a_default_is_a_wiring_error() -> None:
    @dataclass(frozen=True)
    class NoDefault:
        max_restore_files: int

    with pytest.raises(ValueError, match="the server has no default for max_restore_files"):
        resolve_params(NoDefault, CompactOptions(), SERVER)


def test_options_read_lists_the_options_of_nested_records_too() -> None:
    assert options_read(Outer) == {
        "prune_keep_recent",
        "prune_clear_inputs",
        "fallback",
        "file_tools",
    }


def test_the_shared_records_build_what_their_steps_take() -> None:
    restore = RestoreParams(2, 300, 900, ("claude_code",))
    assert restore.limits == RestoreLimits(2, 300, 900)
    assert restore.tools == read_tools_from(["claude_code"])
    summary = SummaryParams(800, 5000, 1000, ("save_note.target:created",))
    assert isinstance(summary.vocabulary, Vocabulary)
    assert summary.vocabulary.by_name.keys() >= {"save_note"}
