"""Archive and session ids, and the checksum of what was archived.

Both kinds of id end up in file names, so a valid id can never become a path: ASCII
letters, digits, `_`, `.` and `-`, starting with a letter or digit, at most 128 characters,
and no `..` anywhere. That rules out `/`, `\\`, NUL, `.`, `..` and any leading `-`.

Clock and randomness are passed in, so everything here stays pure.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

import orjson

from app.core.json_numbers import dumps

MAX_ID_LENGTH = 128
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_HEX = re.compile(r"[0-9a-f]+")
_TIME_DIGITS = 20


def is_valid_id(value: str) -> bool:
    """True when `value` is safe to use as an archive or session id (and file name)."""
    if not isinstance(value, str) or ".." in value:
        return False
    # fullmatch, not match: `$` alone would accept a trailing newline.
    return ID_PATTERN.fullmatch(value) is not None


def new_archive_id(now_ns: int, random_hex: str) -> str:
    """A time-sortable archive id: zero-padded nanoseconds, then lowercase hex randomness."""
    if now_ns < 0 or now_ns >= 10**_TIME_DIGITS:
        raise ValueError("now_ns out of range")
    if _HEX.fullmatch(random_hex) is None:
        raise ValueError("random_hex must be lowercase hex")
    archive_id = f"{now_ns:0{_TIME_DIGITS}d}-{random_hex}"
    if len(archive_id) > MAX_ID_LENGTH:
        raise ValueError("random_hex too long")
    return archive_id


def archive_sha256(messages: list[dict[str, Any]]) -> str:
    """sha256 hex of the canonical JSON of `messages` (sorted keys, compact, UTF-8).

    orjson, like the archive store, so the checksum describes exactly the bytes stored
    (it writes NaN as null and refuses lone surrogates, where `json` would differ).
    Raises `ValueError` for what cannot be JSON at all.

    Hashed message by message: compact JSON of a list is `[`, its items joined by `,`,
    then `]`, so the digest is the same as of the whole document, without holding the
    whole document at once (a copy the size of a large request's body at the peak of
    `/compact`)."""
    digest = hashlib.sha256(b"[")
    try:
        for i, message in enumerate(messages):
            if i:
                digest.update(b",")
            digest.update(dumps(message, sort_keys=True))
    except orjson.JSONEncodeError as exc:
        raise ValueError(f"messages are not serializable as JSON: {exc}") from exc
    digest.update(b"]")
    return digest.hexdigest()
