"""The note for a file that changed since the session last read it.

Only a re-read gets the note: the first read of a file in a session has nothing to compare
with. Modification times are integer nanoseconds from `fstat` on the descriptor that was
read (or stat'ed), so two reads of an unchanged file always compare equal.

Last-seen times are stored per session under a key derived from the file's location
beneath the work directory (the sandbox's normalised path), so `src/a.py`, `./src/a.py`
and `/workspace/src/a.py` are one file.
"""

from __future__ import annotations

import hashlib

MODIFIED_NOTE = "Note: {file} was modified externally."


def modified_note(file: str, previous_ns: int | None, current_ns: int) -> str | None:
    """The note when the file was seen before with another modification time."""
    if previous_ns is None or previous_ns == current_ns:
        return None
    return MODIFIED_NOTE.format(file=file)


def seen_key(location: str) -> str:
    """A file name for a location: sha256 hex, so no path ever becomes a path."""
    return hashlib.sha256(location.encode("utf-8", "surrogateescape")).hexdigest()


def with_note(text: str, note: str | None) -> str:
    """A restored file's text with the note on its own line after one blank line."""
    if note is None:
        return text
    separator = "\n" if text.endswith("\n") else "\n\n"
    return f"{text}{separator}{note}" if text else note
