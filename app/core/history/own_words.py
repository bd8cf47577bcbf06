"""A user's own words in a request that is mostly pasted text.

A later request is often a log, a traceback, code or a long URL, pasted around a sentence
that says what the user wants. Cut to its first characters, such a request keeps the
paste and loses the question. Here the request keeps its first line and the lines that
read as prose, the paste between them marked `…` (the whole message stays in the archive,
for recall).
"""

from __future__ import annotations

import re

_EDGE_CHARS = 4000
_TOKEN_CHARS = 40
# A line that opens like pasted output: a timestamp or number, markup or a prompt, a
# stack frame, a log level, an exception.
_PASTED_LINE = re.compile(
    r"^(?:\[?\d|[<>$|{}\[\]()+=@%]|at\s|File \"|Traceback"
    r"|(?:DEBUG|INFO|WARN|WARNING|ERROR|TRACE|FATAL|CRITICAL)\b"
    r"|[\w.]*(?:Error|Exception|Warning):)"
)
# A line of prose opens with a letter, a list bullet or a quote (never indented).
_PROSE_START = re.compile(r"^(?:[^\W\d_]|[-*•] |[\"'`(“‘])")
_PLAIN_WORD = re.compile(r"^[^\W\d_](?:[^\W\d_]|['’-])*[.,:;!?]?$")


def request_fact(words: str, limit: int) -> str:
    """A later request as the ledger keeps it, in at most `limit` characters: whole when
    short. A long one is mostly something pasted around the user's own words: its first
    line (what the user typed or ran first) and every line that reads as the user's prose
    (`_own_words`) are kept, each cut paste marked `…`, so the fact still says what was
    asked. Long tokens (URLs, hashes) are cut only when that is still too long, and in the
    first line only when it alone does not fit: the words that name the request stay as
    typed."""
    head = words[: 4 * limit]
    if len(head) == len(words) or len(" ".join(head.split())) <= limit:
        collapsed = " ".join(words.split())
        if len(collapsed) <= limit:
            return collapsed
    own = [" ".join(line.split()) for line in _own_words(_edge_lines(words))]
    text = " ".join(own)
    if len(text) > limit - 2:
        first, rest = (own[0], own[1:]) if own else ("", [])
        whole = len(first) <= limit - 2
        text = " ".join([first, _shortened(" ".join(rest))]) if whole else _shortened(text)
    return text[: limit - 2].rstrip() + " …"


def _edge_lines(words: str) -> list[str]:
    """The non-empty lines of a text's first and last `_EDGE_CHARS` (a long paste's
    middle is never the user's question; lines cut at the edges are left out)."""
    if len(words) <= 2 * _EDGE_CHARS:
        lines = words.splitlines()
    else:
        lines = [*words[:_EDGE_CHARS].splitlines()[:-1], *words[-_EDGE_CHARS:].splitlines()[1:]]
    return [line for line in lines if line.strip()]


def _own_words(lines: list[str]) -> list[str]:
    """The first line and the lines that read as the user's prose (`_is_prose`), outside
    code fences, each once; `…` where pasted lines between them were left out."""
    kept: list[str] = []
    seen: set[str] = set()
    fenced = skipped = False
    for at, line in enumerate(lines):
        fence = line.lstrip().startswith("```")
        fenced = fenced != fence
        own = not fence and not fenced and (at == 0 or _is_prose(line))
        if own and line.strip() not in seen:
            kept.extend(["…", line] if skipped and kept else [line])
            seen.add(line.strip())
            skipped = False
        elif not own:
            skipped = True
    return kept


def _is_prose(line: str) -> bool:
    """Prose: it opens like a sentence or a list item, not like code, a stack, a log, a
    table or a program line (`_PASTED_LINE`), and at least three plain words make at least
    half of its tokens."""
    if not _PROSE_START.match(line) or _PASTED_LINE.match(line):
        return False
    tokens = line.split()
    plain = sum(1 for token in tokens if _PLAIN_WORD.match(token))
    return plain >= 3 and 2 * plain >= len(tokens)


def _shortened(text: str) -> str:
    """`text` with each token longer than `_TOKEN_CHARS` cut, marked `…`."""
    return " ".join(
        t if len(t) <= _TOKEN_CHARS else t[: _TOKEN_CHARS - 1] + "…" for t in text.split()
    )
