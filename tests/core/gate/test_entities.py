"""What a summary states that can be checked, and where in the history each occurs."""

from __future__ import annotations

from app.core.gate.entities import Entity, HistoryText, entities
from tests.builders import assistant, parse, tool_result, tool_use, user

HISTORY = HistoryText.of(
    parse(
        [
            user("Fix the rounding in src/pkg/fields.py; TimeDelta must give 345."),
            assistant("Running.", tool_use("bash", "t1", command="pytest -q tests/test_fields.py")),
            tool_result(
                "t1", "FAILED tests/test_fields.py::test_round - see https://docs.example/r"
            ),
        ]
    )
)


def test_paths_urls_code_identifiers_and_numbers_are_found_once_each() -> None:
    found = entities(
        "Edited `src/pkg/fields.py` (TimeDelta._serialize) after `pytest -q` showed 345; "
        "see https://docs.example/r and fields.py."
    )
    assert found == [
        Entity("url", "https://docs.example/r"),
        Entity("path", "src/pkg/fields.py"),
        Entity("code", "pytest -q"),
        Entity("path", "fields.py"),
        Entity("identifier", "TimeDelta._serialize"),
        Entity("number", "345"),
    ]


def test_a_word_cut_short_or_a_code_fence_names_nothing() -> None:
    assert entities("The error names PixelR … and ```python``` nothing else") == []


def test_each_entity_is_found_where_it_was_said() -> None:
    sources = {e.text: HISTORY.sources(e) for e in entities(
        "`src/pkg/fields.py`, `fields.py`, `pytest -q tests/test_fields.py`, test_round, "
        "https://docs.example/r, 345, TimeDelta"
    )}  # fmt: skip
    assert sources == {
        "https://docs.example/r": {"results"},
        "src/pkg/fields.py": {"user"},
        "fields.py": {"user"},
        "pytest -q tests/test_fields.py": {"agent"},
        "test_round": {"results"},
        "345": {"user"},
        "TimeDelta": {"user"},
    }


def test_what_the_history_never_says_is_found_nowhere() -> None:
    found = entities("Created `/home/user/app/Dockerfile`; ran `docker build -t app .` on 8080.")
    assert [HISTORY.sources(e) for e in found] == [set(), set(), set()]
