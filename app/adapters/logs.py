"""Log lines as JSON objects (one per line) or plain text, each with its request id.

JSON fields: `time` (UTC, ISO 8601, milliseconds), `level`, `logger`, `message`,
`request_id` (null outside a request), then every `extra` field the code passed, then
`exc` with the traceback when there is one. Text lines carry the same fields: time (the
same UTC string), level, logger, `[request_id]`, message, then every `extra` field as
`key=value` (the value as JSON when it is not a plain word, so a line stays one line), then
the traceback. The code never passes message contents as `extra`: only counts, ids, names
and error descriptions.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

from app.core.request_context import REQUEST_ID

# The attributes every LogRecord has; anything else on a record came from `extra`
# (except uvicorn's `color_message`, the same message with terminal colours).
_RECORD_FIELDS = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()
    | {"message", "asctime", "color_message"}
)
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
_PLAIN = re.compile(r"[A-Za-z0-9_./:@+-]+")


def extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The fields the code passed as `extra` (and the request id the filter added)."""
    return {
        key: value
        for key, value in vars(record).items()
        if key not in _RECORD_FIELDS and key != "request_id"
    }


class RequestIdFilter(logging.Filter):
    """Puts the current request id on every record, for both formats."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = REQUEST_ID.get()
        return True


def _time(record: logging.LogRecord) -> str:
    """UTC, ISO 8601, milliseconds, with the offset: the same in both formats."""
    return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _time(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        for key, value in extra_fields(record).items():
            line.setdefault(key, value)
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """`TEXT_FORMAT`, then ` key=value` for every extra field."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        return _time(record)

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        fields = "".join(f" {k}={_shown(v)}" for k, v in extra_fields(record).items())
        return super().formatMessage(record) + fields


def _shown(value: object) -> str:
    if isinstance(value, str) and _PLAIN.fullmatch(value):
        return value
    return json.dumps(value, default=str, ensure_ascii=False)


LogFormat = Literal["json", "text"]
QUIET = ("httpx", "httpcore", "httpx2", "httpcore2")


def build_handler(fmt: LogFormat, stream: TextIO) -> logging.Handler:
    """A handler writing `fmt` lines, each with the current request id, to `stream`."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    return handler


def configure_logging(fmt: LogFormat, level: str, stream: TextIO | None = None) -> None:
    """One handler on the root logger (replacing any), uvicorn's loggers routed to it."""
    handler = build_handler(fmt, stream or sys.stderr)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        uvicorn_logger = logging.getLogger(name)
        uvicorn_logger.handlers.clear()
        uvicorn_logger.propagate = True
    # The HTTP clients' own lines name every URL they fetch: a proxied request's query may
    # hold a key (`?key=`), and one line a request is noise. Their warnings still pass.
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
