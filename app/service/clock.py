"""The real clock and id source, the defaults every service takes as parameters (tests
pass their own).

An id is time-sortable and unique (`app.core.sessions.ids.new_archive_id`: nanoseconds, then 48
random bits), so archives, jobs and compaction records written at once never collide and
their file names list in creation order.
"""

from __future__ import annotations

import secrets
import time
from datetime import UTC, datetime

from app.core.sessions import new_archive_id


def utc_now() -> datetime:
    return datetime.now(UTC)


def time_sortable_id() -> str:
    return new_archive_id(time.time_ns(), secrets.token_hex(6))
