"""Strings JSON allows but no answer can carry: a lone surrogate escape such as `"\\udc80"`
has no UTF-8 form, so no answer, archive or provider request can hold it. Every route
refuses it at the door (`app.api.limits.unencodable_text`, a 422) instead of failing when
it writes, and the command line refuses it alike. Framework-free: the command line imports
it without the web framework. Only called on a body orjson refused (orjson never parses
one), so ordinary requests never pay for the walk."""

from __future__ import annotations

from typing import Any

NOT_TEXT = "a lone surrogate escape (such as \\udc80) is not text: it has no UTF-8 form"


def unencodable_at(document: Any) -> str | None:
    """Where the first string (a value or a key, in document order) without a UTF-8 form
    is, as the caller writes the field (`messages[2].content`); None when there is none."""
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if not _encodable(node):
                return path or "body"
        elif isinstance(node, dict):
            children: list[tuple[Any, str]] = []
            for key, child in node.items():
                name = key if _encodable(key) else key.encode("utf-8", "backslashreplace").decode()
                where = f"{path}.{name}" if path else name
                if not _encodable(key):
                    return where
                children.append((child, where))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(
                (child, f"{path}[{index}]") for index, child in reversed(list(enumerate(node)))
            )
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
