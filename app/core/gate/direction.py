"""Does a sentence tell an edit the right way round? The names it says an edit now
requires, or no longer requires, against the edit's own text before and after.

"Changed `models.py` to require non-empty strings for `title` and `snippet`" names the
file, its fields and no status word, so every other rule passes it — and it is false when
the edit took `title` and `snippet` out of the validator. An edit call carries both sides
(`app.core.gate.evidence.Step.removed` / `added`): a name only the removed side has was
taken out, one only the added side has was put in. A sentence that says the edit of a
file it names made something stricter (require, enforce, validate, reject, forbid) for
names the edits took out (and none they put in), or made it looser (no longer require,
allow, remove the check) for names they put in (and none they took out), states the
edit's opposite (`direction`). A
sentence naming no edited file, or names both sides hold, says nothing checkable here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.core.gate.entities import Entity
from app.core.gate.evidence import Evidence

_STRICTER = re.compile(
    r"\b(?:requires?|required|requiring|enforc\w*|validat\w*|rejects?|rejected|forbid\w*"
    r"|disallow\w*|mandatory|stricter)\b"
)
_LOOSER = re.compile(
    r"\b(?:no longer|not longer|stop(?:s|ped)?|optional|allows?|allowed|accepts?|accepted"
    r"|relax\w*|loosen\w*|remov\w*|drop(?:s|ped)?|took out|taken out|without)\b"
)
_NO_LONGER = re.compile(r"\b(?:no longer|not longer|stop(?:s|ped)?|without)\b")
_NAME = re.compile(r"[a-z_][\w.]*")
NAME_CHARS = 3


def direction_false(low: str, found: Sequence[Entity], evidence: Evidence) -> bool:
    """Whether `low` (a sentence, lower-cased) says an edit went the other way."""
    looser = _LOOSER.search(low) is not None
    stricter = _STRICTER.search(low) is not None and _NO_LONGER.search(low) is None
    if stricter == looser:
        return False  # neither, or both ("allow 0 and reject negatives")
    paths = [e.text.lower().lstrip("./") for e in found if e.kind == "path"]
    edits = [
        s
        for s in evidence.steps
        if (s.removed or s.added) and any(_ends(p, n) for p in s.paths for n in paths)
    ]
    if not edits:
        return False
    removed = {w for s in edits for w in _NAME.findall(s.removed)}
    added = {w for s in edits for w in _NAME.findall(s.added)}
    names = [
        n
        for e in found
        if e.kind != "path"
        for n in _NAME.findall(e.text.lower())
        if len(n) >= NAME_CHARS and not any(n in p for p in paths)
    ]
    if not names:
        return False
    # a name both sides hold (the field the validator kept) shows no direction
    taken_out = sum(n in removed and n not in added for n in names)
    put_in = sum(n in added and n not in removed for n in names)
    return (stricter and taken_out > 0 and put_in == 0) or (
        looser and put_in > 0 and taken_out == 0
    )


def _ends(path: str, needle: str) -> bool:
    return path == needle or path.endswith("/" + needle)
