"""The helpers `Settings` is built with: where the options' settings are placed, and which
servers are local. The settings are split over a chain of classes, so `place` with no names
must skip the settings a parent class already placed."""

from __future__ import annotations

from typing import Any

import pytest

from app.settings import Settings
from app.settings.compaction import CompactionSettings
from app.settings.sources import DECLARED, ENV_PREFIX, is_loopback, place


def test_named_settings_are_placed_in_the_order_given_with_their_declaration() -> None:
    namespace: dict[str, Any] = {}
    place(namespace, "threshold", "context_window")
    assert list(namespace["__annotations__"]) == ["threshold", "context_window"]
    _, spec = DECLARED["threshold"]
    assert repr(namespace["threshold"]) == repr(spec.field(ENV_PREFIX))


def test_with_no_names_only_the_settings_placed_nowhere_yet_are_added_in_declared_order() -> None:
    first, second, *rest = DECLARED
    namespace: dict[str, Any] = {}
    place(namespace, first)
    place(namespace, placed=[second])
    assert list(namespace["__annotations__"]) == [first, *rest]


def test_the_parent_class_fields_come_first_and_every_declared_setting_is_one_field() -> None:
    parent = list(CompactionSettings.model_fields)
    fields = list(Settings.model_fields)
    assert fields[: len(parent)] == parent
    assert len(fields) == len(set(fields))
    assert set(DECLARED) <= set(fields)


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("10.0.0.1", False),
        ("ollama.internal", False),
        ("", False),
    ],
)
def test_a_server_is_local_on_a_loopback_address_or_localhost(host: str, local: bool) -> None:
    assert is_loopback(host) is local
