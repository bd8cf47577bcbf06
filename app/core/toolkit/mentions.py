"""`@path` mentions in the user's input, and the reminder they add.

A mention only makes the model read the file itself (with its Read tool); no file content
is ever injected here. The rules:

- the regex `@([a-zA-Z0-9/._-]+(?:\\.[a-zA-Z0-9]+)?)`: project-relative paths, ASCII,
  no spaces;
- an `@` right after a letter or digit is no mention (`user@example.com`);
- trailing dots are not part of the path ("see @README.md." means `README.md`);
- in order of first appearance, each path once; at most `limit` (5) are named, the rest
  counted as "(and N more…)".

Each named file gets the reminder block exactly; the count of the others is one
more block of its own, so every block stays the template.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

MENTION_PATTERN = re.compile(r"(?<![a-zA-Z0-9])@([a-zA-Z0-9/._-]+(?:\.[a-zA-Z0-9]+)?)")
DEFAULT_MENTION_LIMIT = 5

REMINDER_TEMPLATE = (
    "<system-reminder>\n"
    "The user mentioned @{path}.\n"
    "You MUST read this file with the Read tool before answering.\n"
    "</system-reminder>"
)
MORE_TEMPLATE = "<system-reminder>\n(and {count} more…)\n</system-reminder>"
REMINDER_SEPARATOR = "\n\n"


def find_mentions(text: str) -> list[str]:
    """The mentioned paths, in order of first appearance, each once."""
    found: dict[str, None] = {}
    for match in MENTION_PATTERN.finditer(text):
        path = match.group(1).rstrip(".")
        if path:
            found.setdefault(path, None)
    return list(found)


def render_reminders(paths: Sequence[str], limit: int = DEFAULT_MENTION_LIMIT) -> str:
    """One reminder block per named path (the first `limit`), then "(and N more…)"."""
    shown = list(paths[: max(limit, 0)])
    blocks = [REMINDER_TEMPLATE.format(path=path) for path in shown]
    hidden = len(paths) - len(shown)
    if hidden > 0:
        blocks.append(MORE_TEMPLATE.format(count=hidden))
    return "\n".join(blocks)


def append_reminders(text: str, paths: Sequence[str], limit: int = DEFAULT_MENTION_LIMIT) -> str:
    """The input with the reminders appended (inside the user message, not a system
    message); the input itself when nothing is mentioned."""
    if not paths:
        return text
    reminders = render_reminders(paths, limit)
    return f"{text}{REMINDER_SEPARATOR}{reminders}" if text else reminders
