"""A request's option over the server's default.

One rule for every option a request may leave out: only a missing value (None) falls back
to the default, so an explicit 0 or False is honoured as sent.
"""

from __future__ import annotations

from typing import TypeVar

_T = TypeVar("_T")


def pick(value: _T | None, default: _T) -> _T:
    return default if value is None else value
