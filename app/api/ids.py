"""Ids in URL paths, checked before any lookup: a malformed one is a 422 naming the path
parameter, and never reaches a file name (`app.core.sessions.ids.is_valid_id`)."""

from __future__ import annotations

from app.api.errors import ApiError
from app.core.sessions import is_valid_id


def require_id(value: str, field: str) -> None:
    """Raises the 422 for `field` (`archive_id` → "not a valid archive id")."""
    if not is_valid_id(value):
        kind = field.removesuffix("_id")
        raise ApiError(422, "invalid_request", f"not a valid {kind} id", field=field)
