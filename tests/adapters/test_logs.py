from __future__ import annotations

import io
import json
import logging
import sys

import pytest

from app.adapters.logs import JsonFormatter, build_handler, configure_logging
from app.core.request_context import REQUEST_ID


def record(**extra: object) -> logging.LogRecord:
    made = logging.LogRecord("context_compact.x", logging.WARNING, "f.py", 1, "a %s", ("b",), None)
    made.created = 1763856000.25  # 2025-11-23T00:00:00.250Z
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def test_a_json_line_has_the_fixed_fields_then_the_extra_ones() -> None:
    made = record(request_id="r-1", tokens_before=10, color_message="\x1b[36ma b\x1b[0m")
    line = json.loads(JsonFormatter().format(made))
    assert line == {
        "time": "2025-11-23T00:00:00.250+00:00",
        "level": "warning",
        "logger": "context_compact.x",
        "message": "a b",
        "request_id": "r-1",
        "tokens_before": 10,
    }


def test_a_traceback_goes_under_exc() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        made = record()
        made.exc_info = sys.exc_info()
    line = json.loads(JsonFormatter().format(made))
    assert line["exc"].startswith("Traceback (most recent call last):")
    assert line["exc"].endswith("ValueError: boom")


@pytest.fixture
def stream() -> io.StringIO:
    return io.StringIO()


def test_the_handler_stamps_the_current_request_id(stream: io.StringIO) -> None:
    handler = build_handler("json", stream)
    token = REQUEST_ID.set("req-9")
    try:
        handler.handle(record())
    finally:
        REQUEST_ID.reset(token)
    handler.handle(record())
    ids = [json.loads(line)["request_id"] for line in stream.getvalue().splitlines()]
    assert ids == ["req-9", None]


def test_the_text_format_is_one_readable_line(stream: io.StringIO) -> None:
    handler = build_handler("text", stream)
    token = REQUEST_ID.set("req-9")
    try:
        handler.handle(record())
    finally:
        REQUEST_ID.reset(token)
    assert stream.getvalue().endswith(" WARNING context_compact.x [req-9] a b\n")


@pytest.mark.usefixtures("restore_logging")
def test_configure_logging_routes_uvicorn_lines_to_the_one_handler(stream: io.StringIO) -> None:
    configure_logging("json", "info", stream)
    logging.getLogger("uvicorn.error").info("Started server process")
    logging.getLogger("context_compact").debug("not at info")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(line["logger"], line["message"]) for line in lines] == [
        ("uvicorn.error", "Started server process")
    ]


def test_a_text_line_keeps_every_extra_field(stream: io.StringIO) -> None:
    handler = build_handler("text", stream)
    handler.handle(
        record(
            method="POST",
            path="/compact",
            status=200,
            duration_ms=12.5,
            error="read failed: no such file\nsecond line",
            tokens={"before": 10, "after": 4},
            request_id="ignored: the filter sets the current one",
            color_message="\x1b[36ma b\x1b[0m",
        )
    )
    line = stream.getvalue()
    assert line.endswith(
        " WARNING context_compact.x [None] a b method=POST path=/compact status=200"
        ' duration_ms=12.5 error="read failed: no such file\\nsecond line"'
        ' tokens={"before": 10, "after": 4}\n'
    )
    assert line.count("\n") == 1


def test_a_text_line_puts_the_traceback_after_the_fields(stream: io.StringIO) -> None:
    handler = build_handler("text", stream)
    try:
        raise ValueError("boom")
    except ValueError:
        made = record(path="/x")
        made.exc_info = sys.exc_info()
    handler.handle(made)
    first, *rest = stream.getvalue().splitlines()
    assert first.endswith("[None] a b path=/x")
    assert rest[0] == "Traceback (most recent call last):"
    assert rest[-1] == "ValueError: boom"


def test_a_text_line_has_the_json_line_s_time_in_utc(stream: io.StringIO) -> None:
    """The time field as the JSON format writes it (UTC, ISO 8601, milliseconds, the
    offset), not the local time without a zone."""
    made = record()
    made.created = 1764115200.25  # 2025-11-26 00:00:00.250 UTC
    build_handler("json", stream).handle(made)
    build_handler("text", stream).handle(made)
    as_json, as_text = stream.getvalue().splitlines()
    assert json.loads(as_json)["time"] == "2025-11-26T00:00:00.250+00:00"
    assert as_text.startswith("2025-11-26T00:00:00.250+00:00 WARNING context_compact.x ")
