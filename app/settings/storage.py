"""Where the agent's files and our data live: the work directory (read-only for us), the
data directory and its health, and the PostgreSQL database that may replace it (its pool,
timeouts and TCP keepalives)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated

from pydantic import BeforeValidator, Field, SecretStr

from app.settings.sources import CommaList

Workdir = Annotated[
    str,
    Field(".", description="the agent's work directory, read-only for us"),
]

WorkdirAliases = Annotated[
    CommaList,
    Field(
        default_factory=list,
        description=(
            "comma-separated absolute paths under which the agent sees the work directory "
            "(e.g. `/home/me/project`); absolute paths below them map into it"
        ),
    ),
]

DataDir = Annotated[
    str,
    Field(
        "./data",
        description=(
            "where archives, background compaction jobs, session records and seen file "
            "times are written"
        ),
    ),
]

DatabaseUrl = Annotated[
    SecretStr | None,
    Field(
        None,
        description=(
            "a PostgreSQL URL (`postgresql://user:pass@host:5432/db`): archives, session "
            "records, seen times and background jobs live there instead of `data_dir`, for "
            "replicas without a shared volume (docs/postgres.md); never logged"
        ),
    ),
]

DatabasePoolMin = Annotated[
    int,
    Field(1, ge=0, description="database connections each replica keeps open"),
]

DatabasePoolMax = Annotated[
    int,
    Field(10, ge=1, description="database connections each replica may open at most"),
]

DatabasePoolWait = Annotated[
    float,
    Field(
        5.0,
        gt=0,
        description=(
            "seconds a request waits for a free database connection (then the storage "
            "failure: `archive_failed`, or `503` for jobs)"
        ),
    ),
]

DatabaseConnectTimeout = Annotated[
    int,
    Field(5, ge=1, description="seconds to establish one database connection"),
]

DatabaseStatementTimeout = Annotated[
    float,
    Field(10.0, ge=0, description="seconds one SQL statement may run (`0`: no limit)"),
]

DatabaseCallTimeout = Annotated[
    float,
    Field(
        15.0,
        gt=0,
        description=(
            "seconds one database call may take, the wait for a connection included; past "
            "it (or past the request's deadline) its connection is closed and discarded, "
            "so a stalled database fails the call instead of holding it"
        ),
    ),
]

DatabaseKeepalivesIdle = Annotated[
    int,
    Field(10, ge=1, description="seconds a database connection is silent before TCP keepalives"),
]

DatabaseKeepalivesInterval = Annotated[
    int,
    Field(5, ge=1, description="seconds between unanswered TCP keepalives"),
]

DatabaseKeepalivesCount = Annotated[
    int,
    Field(3, ge=1, description="unanswered TCP keepalives before the connection is dropped"),
]

DatabaseTcpUserTimeout = Annotated[
    float,
    Field(
        25.0,
        ge=0,
        description=(
            "seconds data sent to the database may stay unacknowledged before the kernel "
            "drops the connection (`0`: the system's default)"
        ),
    ),
]

MinFreeBytes = Annotated[
    int,
    Field(
        64 * 1024 * 1024,
        ge=0,
        description=(
            "`/readyz` answers 503 when the data directory's file system has fewer free "
            "bytes than this (`0`: not checked)"
        ),
    ),
]

TempSweepSeconds = Annotated[
    float,
    Field(
        600.0,
        ge=0,
        description=(
            "every this many seconds, temp files of killed writes older than an hour are "
            "deleted in every directory of the data directory (`0`: at start-up only)"
        ),
    ),
]


_DURATION = re.compile(r"([0-9]+)([dhms])")
_UNIT_SECONDS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(value: object) -> object:
    """`30d`, `12h`, `45m`, `10s` or `0` as a `timedelta`. A bare number other than 0 is
    refused: `30` could mean days to one reader and seconds to another."""
    if isinstance(value, timedelta):
        return value
    text = str(value).strip().lower()
    if text == "0":
        return timedelta(0)
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(
            "expected a duration: a whole number and a unit, d, h, m or s "
            "(`30d`, `12h`, `45m`, `10s`), or `0` to keep everything"
        )
    return timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])


Retention = Annotated[
    timedelta,
    BeforeValidator(parse_duration),
    Field(
        "30d",
        validate_default=True,
        description=(
            "archives, their recall entries and compaction records older than this are "
            "deleted (`30d`, `12h`, `45m`, `10s`; `0`: kept forever), in the data directory "
            "or the database; so is an archive left without a record (a killed "
            "compaction's) once older than `COMPACT_REQUEST_TIMEOUT` + "
            "`COMPACT_SUMMARY_DEADLINE`"
        ),
    ),
]

RetentionSweepSeconds = Annotated[
    float,
    Field(
        3600.0,
        ge=0,
        description=(
            "every this many seconds, what `COMPACT_RETENTION` lets go is deleted (also at "
            "start-up; `0`: at start-up only)"
        ),
    ),
]
