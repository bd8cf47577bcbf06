"""`context-compact serve`: where it listens, its header limits and timeouts, and its log
lines."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

Host = Annotated[
    str,
    Field("127.0.0.1", description="where `context-compact serve` listens"),
]

Port = Annotated[
    int,
    Field(8080, gt=0, lt=65536, description="port of `context-compact serve`"),
]

MaxHeaderBytes = Annotated[
    int,
    Field(64 * 1024, ge=1024, description="bytes of a request line and its headers (431 past it)"),
]

HeaderTimeout = Annotated[
    float,
    Field(
        10.0,
        gt=0,
        description="seconds from connecting (or a request's first byte) to the headers' end",
    ),
]

KeepAliveTimeout = Annotated[
    int,
    Field(5, ge=1, description="seconds an idle connection stays open"),
]

LogLevel = Annotated[
    Literal["debug", "info", "warning", "error"],
    Field("info", description="`debug`, `info`, `warning`, `error`"),
]

LogFormat = Annotated[
    Literal["json", "text"],
    Field(
        "json",
        description=(
            "`json`: one JSON object a line (time, level, logger, message, request_id, "
            "fields); `text`: one readable line with the same fields as `key=value`; never "
            "message contents either way"
        ),
    ),
]
