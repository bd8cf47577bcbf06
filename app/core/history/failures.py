"""Whether a tool result is an error, and the line that names it.

Providers disagree on the flag: the Anthropic shape has `is_error`, the OpenAI shape's
`tool` messages have nothing, and many harnesses never set it. So a result is an error
when the provider says so *or* when its text says so: a Python traceback, an `Error:` /
`error:` / `fatal:` line, a compiler or linter diagnostic (`E999 IndentationError: ...`,
`src/a.ts:3:5 - error TS2322: ...`), a non-zero exit code, "command not found", "timed
out", "not executed", a call that was cancelled. The same session then gives the same
errors in both shapes.

Harnesses wrap a tool's failure in a tag: Claude Code's `<tool_use_error>`, Cline's and
Roo Code's `<error>`; a line opening with one states an error, in either shape, as does
Gemini CLI's `Failed to edit, 0 occurrences found ...` (`failed to` in any case), and the
`Error from server (NotFound): ...` / `Error response from daemon: ...` of kubectl and
Docker. An HTTP
status line (`HTTP/1.1 500`) says a request failed, not what failed: a later line that
states it is kept beside it. A flagged result that opens with the harness's statement of
the failure (`Failed to edit, ...`, the user's refusal: `User rejected update to a.py`) is
named by that line: what follows is what the call carried (the rejected diff, the text an
edit looked for), and an error it quotes mid-line is not the call's. The same result in
the OpenAI shape, where nothing is flagged, is an error by the line it quotes, and is
named by its opening line all the same.

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

A test run names the test that failed apart from what failed in it (pytest's `FAILED id`
summary after its `E   assert 1 == 2` lines, Go's `--- FAIL: TestX`, Rust's `test x ...
FAILED`, Jest's `● suite › test` before `Expected:`). The first such test line is kept
first, with the line stating its failure (the first after it, else the first before it)
when it does not carry one: the ledger then says which test failed and how.
"""

from __future__ import annotations

import re

from app.core.history.structured import read_structured

_TRACEBACK = "Traceback (most recent call last)"
# The first line that names an error: an exception or diagnostic by name, an error keyword
# at the start of a line, or a phrase that says a command failed.
_NAMED_AT_START = (
    r"^\W{0,3}(?:E\d{3,4}\s+)?(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b(?::|$)"
    r"|^\W{0,3}[EF]\d{3,4}\s+\S"
    r"|^[\w./\\-]+:\d+: (?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)$"  # pytest's `a.py:5: XError`
)
_EXCEPTION = re.compile(
    _NAMED_AT_START + r"|:\d+(?::\d+)?:?\s+[EF]\d{3,4}\s"
    r"|:\d+:\d+:\s+[A-Z]{1,4}\d{1,4}\s"  # any linter's `a.py:3:1: W291 ...`
    r"|\berror(?:\[\w+\]| [A-Z]{1,4}\d{2,5})?:\s"  # `error TS2322:`, `error CS1002:`
    r"|\bpanic:\s",
)
# Stated from a line's start: a keyword, pytest's `E   assert ...`, a failed test, a
# program's own failure line (Java, Rust, npm, make, ESLint), an HTTP status line of 4xx
# or 5xx.
_KEYWORD_AT_START = (
    r"^\W{0,3}(?i:error|fatal|failed|failure|exception)\s*:"
    r"|^\W{0,3}(?:(?i:\[error\])|ERROR:|FAILED\b|FAIL\b|(?i:failed to)\b)"
    r"|^<(?:tool_use_error|error)>"
    r"|^\W{0,3}(?i:erreur|fehler|errore|ошибка|错误|エラー)\s*[:：]"
    r"|^\W{0,3}Error (?:from|response from|while|during|in|on|when)\b[^:\n]{0,40}:\s"
    r"|^E {2,}\S|^Exception in thread |^thread '[^']*' panicked at |^npm ERR!"
    r"|^make(?:\[\d+\])?: \*\*\* "
    r"|^\W{0,3}[\w.-]+(?: [\w.-]+){0,4} failed: "  # Codex's `apply_patch verification failed:`
    r"|^\d+:\d+ {2,}error {2}|^(?:< )?HTTP/\d(?:\.\d)? [45]\d\d\b"
)
_KEYWORD = re.compile(_KEYWORD_AT_START)
_NAMED = re.compile(_NAMED_AT_START)
# A status that says a request failed without saying what failed: a later line that states
# the failure is kept beside it.
# A tag or a keyword alone on its line (`<error>`, OpenHands' `ERROR:`): the line after it
# says what failed, and goes with it.
_BARE_TAG = re.compile(r"^(?:<(?:tool_use_error|error)>|(?i:error|fatal):)$")
# A status of the whole call (an HTTP status, an exit code as Codex's shell tool and Claude
# Code's Bash open their output with): a later line naming what failed goes beside it.
_WEAK = re.compile(
    r"^(?:< )?HTTP/\d(?:\.\d)? [45]\d\d\b|^(?i:exit code|process exited with code):? *[1-9]"
)
# A line that states an error from its start, not one that mentions it mid-line.
_STATES = re.compile(f"{_NAMED_AT_START}|{_KEYWORD_AT_START}")
# The user's refusal of a call, as harnesses word it (Claude Code's `User rejected update to
# a.py`, `The user doesn't want to proceed with this tool use`, Cline's `The user denied
# this operation`).
_REFUSED = re.compile(
    r"^\W{0,3}(?:the )?user (?:rejected|denied|declined|refused|does(?:n't| not) want)\b",
    re.IGNORECASE,
)
KEY_LINE_SEPARATOR = " | "
_NOTHING = re.compile(r"^[A-Z][\w ]{0,30}:\s*\((?:none|empty)\)$")
# The one-line stub `prune` leaves of a cleared result (`app.core.plans.prune`), which keeps the
# line stating its failure after `FAILED_MARK`: that line is the result's error line.
CLEARED_PREFIX = "[Old tool result cleared: "
FAILED_MARK = "; failed: "
_CLEARED_FAILURE = re.compile(r"^\[Old tool result cleared: .*?, [\d,]+ tokens; failed: (.+)\]$")
# A line naming a test that failed, and the lines that may say how it failed: those that
# state an error (`_STATES`) and a test framework's own (Jest's `Expected:`, Go's
# `x_test.go:9: got 3`). A bare outcome line (`FAIL`, `FAILED`) says neither.
_TEST_LINE = re.compile(
    r"^_* ?(?:FAILED|ERROR)(?: collecting)? [\w./-]+(?:::\S*|\.py\b)"
    r"|^[\w./-]+::\S+ (?:FAILED|ERROR)\b|^--- FAIL: \S|^test \S+ \.\.\. FAILED$|^● .+ › "
)
# A test run's summary line (pytest's `FAILED id - ...`): preferred to its progress lines.
_SUMMARY = re.compile(r"^_* ?(?:FAILED|ERROR)\b")
_CARRIES_MESSAGE = re.compile(r"^\S*(?:FAILED|ERROR) \S+ - \S")
_DETAIL = re.compile(r"^Expected\b[^:]{0,30}:|^[\w/.-]+_test\.go:\d+: \S")
_OUTCOME = re.compile(r"^\W{0,3}(?:FAILED|FAIL|ERROR)\b(?!:)|^test result: ")
_FAILED = re.compile(
    r"command not found|no such file or directory|permission denied|\btimed out\b"
    r"|\bnot executed\b|non-zero exit|exit(?:ed with)? (?:code|status):? *[1-9]"
    r"|exit code:? *[1-9]|returned (?:exit status|code) [1-9]",
    re.IGNORECASE,
)
# A whole result that is only a status saying the call did not run.
_STOPPED = re.compile(
    r"^\W*(?:cancell?ed|canceled|interrupted|aborted|rejected)\b[^\n]{0,60}$", re.IGNORECASE
)
# What every match of the patterns above holds, lowered: the places where a line may name
# an error, each with the patterns it may feed (`_EXCEPTION`, `_KEYWORD`, `_FAILED`), so
# a line is tried with those only. `error` and `exception` count only where a pattern
# could end them (a colon after optional whitespace, the line's end, `error[E0308]`,
# `[error]`, `error TS2322`), which leaves out the many code lines that merely say
# `error`. A diagnostic code (`E302`, `F401`) is found apart, in the text as it is
# (`_DIAGNOSTIC_CODES`), and feeds `_EXCEPTION`.
_LINE_END = "[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]"  # where `str.splitlines` cuts
_EXC, _KEY, _FAIL, _TEST = 1, 2, 4, 8
_ALL = _EXC | _KEY | _FAIL | _TEST
_MAY_NAME = (
    # One search for every `error` a pattern may end (`error:`, `error[E0308]`, `error
    # TS2322`, ESLint's `error  `, pytest's `ERROR collecting a.py`, `ERROR a.py::t`).
    (
        rf"error(?:\s*(?::|{_LINE_END}|\Z)|\[|\]| [a-z]{{1,4}}\d|  "
        r"| (?:collecting )?[\w./-]+(?:::|\.py))",
        _EXC | _KEY | _TEST,
    ),
    (rf"exception(?:\s*(?::|{_LINE_END}|\Z)| in thread )", _EXC | _KEY),
    (r"fatal\s*:", _KEY),
    ("fail", _KEY | _TEST),
    ("panic:", _EXC),
    (r"e  (?<!\Se  ) *\S", _KEY),  # the literal first: searched fast
    ("panicked at ", _KEY),
    ("npm err!", _KEY),
    ("<tool_use_error>", _KEY),
    (r"error (?:from|response from|while|during|in|on|when)\b[^:\n]{0,40}:\s", _KEY),
    ("erreur", _KEY),
    ("fehler", _KEY),
    ("errore", _KEY),
    ("ошибка", _KEY),
    ("错误", _KEY),
    ("エラー", _KEY),
    ("<error>", _KEY),
    (r": \*\*\* ", _KEY),
    ("http/", _KEY),
    ("●", _TEST),
    (r"expected\b[^:\n]{0,30}:", _TEST),
    ("_test.go:", _TEST),
    ("command not found", _FAIL),
    ("no such file or directory", _FAIL),
    ("permission denied", _FAIL),
    ("timed out", _FAIL),
    ("not executed", _FAIL),
    ("exit", _FAIL),
    ("returned", _FAIL),
)
# A result that is one short status line (`_STOPPED`) also names its failure.
_MAY_STOP = ("cancel", "interrupted", "aborted", "rejected")
_MAY_NAME_LOWERED = tuple((re.compile(p), feeds) for p, feeds in _MAY_NAME)
_PATTERNS = tuple(p for p, _ in _MAY_NAME)
# The plain words among them, for a substring test rather than a regex search.
_MAY_NAME_WORDS = tuple(p for p in (*_PATTERNS, *_MAY_STOP) if re.escape(p) == p)
_MAY_NAME_PATTERNS = tuple(re.compile(p) for p in _PATTERNS if re.escape(p) != p)
# The same for text that is not ASCII, where ignoring case also folds letters such as `ſ`
# and `ı` into ASCII ones, as the patterns themselves do.
_MAY_NAME_ANY_CASE = re.compile("|".join((*_PATTERNS, *_MAY_STOP)), re.IGNORECASE)
# The letters that match an ASCII letter under `re.IGNORECASE` but do not lower to it.
_FOLDED = ("\u0130", "\u0131", "\u017f")
# A diagnostic code: one pattern per letter, each found by a fast search for its letter
# (the regex engine's literal prefix), not a character class tried at every position.
_DIAGNOSTIC_CODES = (
    re.compile(r"E\d{3}"),
    re.compile(r"F\d{3}"),
    re.compile(r":\d+:\d+:\s+[A-Z]{1,4}\d"),
)
_PREFIX_CHARS = 4096
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
    first lines are read for an error. A cleared result's stub gives the failure it kept."""
    if text.startswith(CLEARED_PREFIX):
        kept = _CLEARED_FAILURE.match(text)
        if kept is not None:
            return kept.group(1)
    structured = read_structured(text) if text.lstrip().startswith("{") else None
    if structured is not None:  # a harness's JSON status (`app.core.history.structured`)
        return error_line(structured.text, is_error or structured.failed)
    if not is_error:
        if is_content_tool(tool):
            head = _stated_lines(_tags_joined(_first_lines(text, CONTENT_STATUS_LINES + 1)))
            return _key_line(head[:CONTENT_STATUS_LINES]) if head else None
        if not may_name_error(text):
            return None  # most results: no line of it can name an error
    lines = _tags_joined([line.strip() for line in text.splitlines() if line.strip()])
    if not lines:
        return "(no error text)" if is_error else None
    found = _key_line(_stated_lines(lines))
    # Flagged, or shown to be an error by a later line (the OpenAI shape has no flag): a
    # result opening with its failure is named by it; what follows is what the call carried.
    opens = (is_error or found is not None) and _opens_with_failure(lines[0])
    if opens and (found is None or not _STATES.match(found)):
        return lines[0]
    if found is not None:
        return found
    return lines[0] if is_error else None


def _opens_with_failure(line: str) -> bool:
    """Whether a flagged result's first line is the harness's own statement of the failure
    (`Failed to edit, 0 occurrences found ...`, `User rejected update to a.py`): the lines
    after it are then what the call carried, the rejected diff or the text it looked for,
    and an error they merely quote (`print(f"error: {e}")`) is not the call's."""
    return bool(_REFUSED.match(line) or (_STATES.match(line) and not _WEAK.match(line)))


def _stated_lines(lines: list[str]) -> list[str]:
    """The lines without a field that says there was nothing (Gemini CLI's shell tool
    writes `Error: (none)` and `Stderr: (none)` after every command it ran)."""
    return [line for line in lines if not _NOTHING.match(line)]


def _tags_joined(lines: list[str]) -> list[str]:
    """The lines with a failure tag standing alone (`<error>`) joined to the line after it,
    which states what failed."""
    joined: list[str] = []
    for line in lines:
        if joined and _BARE_TAG.match(joined[-1]):
            joined[-1] = f"{joined[-1]} {line}"
        else:
            joined.append(line)
    return joined


def may_name_error(text: str) -> bool:
    """False only when no line of `text` can name an error (`_MAY_NAME`, `_MAY_STOP`, a
    diagnostic code): the line-by-line search is then spared, as it is for most results."""
    lowered = _lowered(text)
    if lowered is None:
        if _MAY_NAME_ANY_CASE.search(text):
            return True
    elif any(word in lowered for word in _MAY_NAME_WORDS) or any(
        p.search(lowered) for p in _MAY_NAME_PATTERNS
    ):
        return True
    return any(code.search(text) for code in _DIAGNOSTIC_CODES)


def _lowered(text: str) -> str | None:
    """`text` lowered, when a case-insensitive search for lower-case ASCII words finds them
    in it at the same positions as `in` does: lowering kept every position, and the text
    has none of the letters that `re.IGNORECASE` alone folds into ASCII (`_FOLDED`). None
    otherwise (rare): the caller then searches with `re.IGNORECASE`."""
    if text.isascii():
        return text.lower()
    if any(letter in text for letter in _FOLDED):
        return None
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else None


def _first_lines(text: str, count: int) -> list[str]:
    """The first `count` non-empty lines of `text`, stripped, as `str.splitlines` cuts
    them, without splitting a long text whole: a prefix holding one more line than asked
    holds the first `count` lines complete."""
    prefix = text[:_PREFIX_CHARS]
    lines = [line.strip() for line in prefix.splitlines() if line.strip()]
    if len(lines) <= count and len(prefix) < len(text):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[:count]


def _key_line(lines: list[str]) -> str | None:
    if len(lines) == 1 and _STOPPED.match(lines[0]):
        return lines[0]
    # Long outputs: errors are near the end of a log or at its start; the middle is skipped.
    if len(lines) > MAX_SCANNED_LINES:
        half = MAX_SCANNED_LINES // 2
        lines = [*lines[:half], *lines[-half:]]
    joined = "\n".join(lines)
    candidates = _candidate_lines(joined)
    failed_test = _failed_test(lines, candidates)
    if failed_test is not None:
        return failed_test
    starts = _line_numbers(joined, occurrences(joined, _TRACEBACK))
    if starts:
        exceptions = [
            (i, lines[i])
            for i, feeds in candidates
            if i >= starts[-1] and feeds & _EXC and _EXCEPTION.search(lines[i])
        ]
        named = [(i, line) for i, line in exceptions if _NAMED.match(line)]
        if named:  # the exception, and what the program said of it after (pip's `error:`)
            at, line = named[-1]
            after = [text for i, text in exceptions if i > at and _STATES.search(text)]
            return f"{line}{KEY_LINE_SEPARATOR}{after[-1]}" if after else line
        if exceptions:
            return exceptions[-1][1]
    for position, (at, feeds) in enumerate(candidates):
        line = lines[at]
        if _names_error(line, feeds):
            if _STATES.search(line) and not _WEAK.match(line):
                return line
            later = [lines[i] for i, more in candidates[position + 1 :] if more & (_EXC | _KEY)]
            stated = next((t for t in later if _STATES.search(t) and not _WEAK.match(t)), None)
            if stated is None and _WEAK.match(line):  # any line naming what failed
                stated = next((t for t in later if _names_error(t, _EXC | _KEY)), None)
            if stated is None or stated == line:
                return line
            return f"{line}{KEY_LINE_SEPARATOR}{stated}"
    return None


def _failed_test(lines: list[str], candidates: list[tuple[int, int]]) -> str | None:
    """The first line naming a failed test (`_TEST_LINE`; the first summary line when the
    run has one), with the line saying how it failed when it does not say so itself: the
    first after it, else the first before it."""
    tests = [
        p for p, (i, feeds) in enumerate(candidates) if feeds & _TEST and _TEST_LINE.match(lines[i])
    ]
    if not tests:
        return None
    lines_of = [candidates[p][0] for p in tests]
    at = next((i for i in lines_of if _SUMMARY.match(lines[i])), lines_of[0])
    test = lines[at].strip("_ ")
    if _CARRIES_MESSAGE.match(test):
        return test
    details = [i for i, feeds in candidates if i != at and _is_detail(lines[i], feeds)]
    detail = next((i for i in details if i > at), details[0] if details else None)
    if detail is None:
        return test
    said = lines[detail]
    if said.startswith("Expected") and detail + 1 < len(lines):
        following = lines[detail + 1]
        if following.startswith("Received"):
            said = f"{said} {following}"
    return f"{test}{KEY_LINE_SEPARATOR}{said}"


def _is_detail(line: str, feeds: int) -> bool:
    """Whether `line` says how a test failed: it states an error, or is a framework's own
    line of the kind, and it is neither a test line nor a bare outcome."""
    if _TEST_LINE.match(line) or _OUTCOME.match(line):
        return False
    return bool(
        (feeds & (_EXC | _KEY) and _STATES.search(line)) or (feeds & _TEST and _DETAIL.match(line))
    )


def _names_error(line: str, feeds: int = _ALL) -> bool:
    """Whether one of the three patterns finds an error in `line`, trying only those its
    hits may feed (`_MAY_NAME`)."""
    return bool(
        (feeds & _TEST and _TEST_LINE.match(line))
        or (feeds & _KEY and _KEYWORD.search(line))
        or (feeds & _EXC and _EXCEPTION.search(line))
        or (feeds & _FAIL and _FAILED.search(line))
    )


def _candidate_lines(joined: str) -> list[tuple[int, int]]:
    """The lines (of `joined`, stripped lines joined by newlines) that may name an error
    (`may_name_error`), in order, each with the patterns its hits may feed: every line any
    of the patterns matches is among them. Found by searching the text once, not line by
    line: a hit starts within the line that holds it."""
    lowered = _lowered(joined)
    if lowered is None:
        hits = [(m.start(), _ALL) for m in _MAY_NAME_ANY_CASE.finditer(joined)]
    else:
        hits = [(m.start(), feeds) for p, feeds in _MAY_NAME_LOWERED for m in p.finditer(lowered)]
    hits += [(m.start(), _EXC) for code in _DIAGNOSTIC_CODES for m in code.finditer(joined)]
    hits.sort()
    lines: dict[int, int] = {}
    for line, (_, feeds) in zip(_line_numbers(joined, [at for at, _ in hits]), hits, strict=True):
        lines[line] = lines.get(line, 0) | feeds
    return sorted(lines.items())


def occurrences(text: str, word: str) -> list[int]:
    """Where `word` starts in `text`, in order (overlapping ones included): plain substring
    search, far faster than a regex for a literal."""
    found = []
    at = text.find(word)
    while at != -1:
        found.append(at)
        at = text.find(word, at + 1)
    return found


def _line_numbers(joined: str, positions: list[int]) -> list[int]:
    """The line of each position (ascending) of a text whose lines are joined by newlines,
    counting the newlines between one position and the next."""
    numbers = []
    line = last = 0
    for at in positions:
        line += joined.count("\n", last, at)
        last = at
        numbers.append(line)
    return numbers
