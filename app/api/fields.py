"""Validation errors located the way a caller writes the field (`messages[3].content[0].text`),
not pydantic's internal location with union branch labels
(`body.messages.3.content.list[tagged-union[...]].0.text.text`). Framework-free, so the
API's 422s and the command line's messages read alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.api.schemas import ErrorDetail

_TYPE_LABELS = frozenset({"str", "int", "float", "bool", "dict", "list", "none", "json-or-python"})


def _is_branch_label(item: Any) -> bool:
    """Pydantic's names for union branches and validators, not fields the caller wrote."""
    return isinstance(item, str) and ("[" in item or item in _TYPE_LABELS)


def format_loc(loc: Sequence[Any]) -> tuple[str, bool]:
    """`messages[3].role` from pydantic's loc, and whether it ends in a union branch label."""
    parts: list[str] = []
    items = list(loc[1:] if loc and loc[0] == "body" else loc)
    ends_in_branch = bool(items) and _is_branch_label(items[-1])
    for i, item in enumerate(items):
        if isinstance(item, int):
            parts.append(f"[{item}]")
            continue
        if _is_branch_label(item):
            continue
        after_tagged_index = (
            i >= 2 and isinstance(items[i - 1], int) and "tagged-union" in str(items[i - 2])
        )
        if after_tagged_index:
            continue  # the discriminator tag of a block, e.g. `text` in `[0].text.text`
        parts.append(f".{item}" if parts else str(item))
    return "".join(parts) or "body", ends_in_branch


def validation_details(errors: Sequence[Any]) -> list[ErrorDetail]:
    """One detail per real problem: branch mismatches of a union are folded together."""
    located = [(format_loc(e.get("loc", ())), str(e.get("msg", "invalid"))) for e in errors]
    specific = {field for (field, branch), _ in located if not branch}
    details: dict[str, list[str]] = {}
    for (field, branch), message in located:
        if branch and any(s == field or s.startswith((f"{field}.", f"{field}[")) for s in specific):
            continue  # another branch of this union explains the problem better
        details.setdefault(field, [])
        if message not in details[field]:
            details[field].append(message)
    return [ErrorDetail(field=f, message=" or ".join(ms)) for f, ms in details.items()]
