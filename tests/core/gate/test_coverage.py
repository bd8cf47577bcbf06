"""Coverage of a history's salient facts: its requests, files, commands and errors."""

from __future__ import annotations

from app.core.gate.coverage import salient
from app.core.history import extract_facts
from tests.builders import assistant, parse, tool_result, tool_use, user

FACTS = extract_facts(
    parse(
        [
            user("Make the exporter write timestamps in milliseconds."),
            assistant("Reading.", tool_use("read_file", "t1", path="src/export/writer.py")),
            tool_result("t1", "def write(rows): ..."),
            assistant("Testing.", tool_use("bash", "t2", command="pytest -q tests/test_writer.py")),
            tool_result("t2", "E   AssertionError: 1.5 != 1500", is_error=True),
        ]
    )
)
SALIENT = salient(FACTS)


def test_the_groups_are_the_requests_words_files_commands_and_error_names() -> None:
    assert SALIENT.request == frozenset({"exporter", "write", "timestamp", "millisecond"})
    assert (SALIENT.files, SALIENT.commands, SALIENT.errors) == (
        ("src/export/writer.py",),
        ("pytest -q",),
        ("assertionerror",),
    )
    assert (SALIENT.groups(), SALIENT.required()) == (4, 2)


def test_a_summary_naming_the_file_and_the_request_covers_two_groups() -> None:
    text = "Writer.py now writes timestamps in milliseconds."
    assert SALIENT.covered(text) == 2


def test_content_free_prose_covers_nothing() -> None:
    assert SALIENT.covered("The user had goals. Some files changed. Errors were handled.") == 0
