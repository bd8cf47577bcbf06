"""Whether a tool result is an error, and the line that names it.

Providers disagree on the flag: the Anthropic shape has `is_error`, the OpenAI shape's
`tool` messages have nothing, and many harnesses never set it. So a result is an error
when the provider says so *or* when its text says so: a Python traceback, an `Error:` /
`error:` / `fatal:` line, a compiler or linter diagnostic (`E999 IndentationError: ...`,
`src/a.ts:3:5 - error TS2322: ...`), a non-zero exit code, "command not found", "timed
out", "not executed", a call that was cancelled. The same session then gives the same
errors in both shapes.

The line kept is the one that names the error, never simply the last line: SWE-agent ends
a failed edit with boilerplate ("DO NOT re-run the same failed edit command"), while the
line that matters ("E999 IndentationError: unexpected indent") is in the middle. The key
line is the first line that names an error; after a traceback, the last exception line
of the last traceback. A log level alone (`ERROR    retrying`) names nothing.

A log may name several errors. When the first line naming one only mentions it mid-line
(`'brave-news': HTTP Status error: 429`) and a later line states one from its start
(`failed: Engine 'hasdata-google-light': HTTP`), both are kept, joined by
`KEY_LINE_SEPARATOR`: an agent continuing the work needs the error the log reports as its
outcome as much as the first one mentioned. Never more than two lines.
"""

from __future__ import annotations

import re

_TRACEBACK = "Traceback (most recent call last)"
# The first line that names an error: an exception or diagnostic by name, an error keyword
# at the start of a line, or a phrase that says a command failed.
_NAMED_AT_START = (
    r"^\W{0,3}(?:E\d{3,4}\s+)?(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b(?::|$)"
    r"|^\W{0,3}[EF]\d{3,4}\s+\S"
)
_EXCEPTION = re.compile(
    _NAMED_AT_START + r"|:\d+(?::\d+)?:?\s+[EF]\d{3,4}\s"
    r"|\berror(?:\[\w+\]| TS\d+)?:\s"
    r"|\bpanic:\s",
)
_KEYWORD_AT_START = (
    r"^\W{0,3}(?i:error|fatal|failed|failure|exception)\s*:"
    r"|^\W{0,3}(?:\[error\]|ERROR:|FAILED\b|FAIL\b|failed to\b)"
)
_KEYWORD = re.compile(_KEYWORD_AT_START)
# A line that states an error from its start, not one that mentions it mid-line.
_STATES = re.compile(f"{_NAMED_AT_START}|{_KEYWORD_AT_START}")
KEY_LINE_SEPARATOR = " | "
_FAILED = re.compile(
    r"command not found|no such file or directory|permission denied|\btimed out\b"
    r"|\bnot executed\b|non-zero exit|exit(?:ed with)? (?:code|status):? *[1-9]"
    r"|exit code:? *[1-9]|returned (?:exit status|code) [1-9]",
    re.IGNORECASE,
)
# The cheap checks in front of the two unanchored searches, exact by construction:
# every match of `_EXCEPTION` holds one of these (an exception name, a diagnostic code,
# `error`, `panic:`), so a line without one cannot match it; and `_FAILED`'s pattern is
# lower case, so on ASCII text (where ignoring case folds nothing beyond A-Z) it matches
# the lowered text case-sensitively, which the regex engine scans several times faster.
_EXCEPTION_NEEDS = re.compile(r"Error|Exception|[EF]\d{3}|error|panic:")
_FAILED_LOWER = re.compile(_FAILED.pattern)
# A whole result that is only a status saying the call did not run.
_STOPPED = re.compile(
    r"^\W*(?:cancell?ed|canceled|interrupted|aborted|rejected)\b[^\n]{0,60}$", re.IGNORECASE
)
MAX_SCANNED_LINES = 400
# Tools whose output is content (a file, search hits, a listing): an error there is said
# in its first lines ("Error: no such file"), while the content may quote any error text.
_CONTENT_TOOL = re.compile(r"grep|search|read|view|list|glob|^ls$|find|open|fetch", re.I)
CONTENT_STATUS_LINES = 2


def is_content_tool(name: str) -> bool:
    return bool(_CONTENT_TOOL.search(name))


def error_line(text: str, is_error: bool | None = False, tool: str = "") -> str | None:
    """The line naming the error when `text` (or the provider's flag) says the call failed;
    None for a result that is not an error. A flagged result that names nothing gives its
    first non-empty line. For a content tool (`tool` reads, searches or lists), only the
    first lines are read for an error."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "(no error text)" if is_error else None
    scanned = lines[:CONTENT_STATUS_LINES] if not is_error and is_content_tool(tool) else lines
    found = _key_line(scanned)
    if found is not None:
        return found
    return lines[0] if is_error else None


def _key_line(lines: list[str]) -> str | None:
    if len(lines) == 1 and _STOPPED.match(lines[0]):
        return lines[0]
    # Long outputs: errors are near the end of a log or at its start; the middle is skipped.
    if len(lines) > MAX_SCANNED_LINES:
        half = MAX_SCANNED_LINES // 2
        lines = [*lines[:half], *lines[-half:]]
    starts = [i for i, line in enumerate(lines) if _TRACEBACK in line]
    if starts:
        exceptions = [line for line in lines[starts[-1] :] if _EXCEPTION.search(line)]
        if exceptions:
            return exceptions[-1]
    for at, line in enumerate(lines):
        if _names_error(line) or _KEYWORD.search(line) or _says_failed(line):
            if _STATES.search(line):
                return line
            stated = next((later for later in lines[at + 1 :] if _STATES.search(later)), None)
            if stated is None or stated == line:
                return line
            return f"{line}{KEY_LINE_SEPARATOR}{stated}"
    return None


def _names_error(line: str) -> bool:
    return _EXCEPTION_NEEDS.search(line) is not None and _EXCEPTION.search(line) is not None


def _says_failed(line: str) -> bool:
    if line.isascii():
        return _FAILED_LOWER.search(line.lower()) is not None
    return _FAILED.search(line) is not None
