from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.history import failures
from app.core.history.failures import error_line
from app.core.messages import ToolResultBlock, tool_result_text, tool_uses
from app.core.provider.dialects import detect_format
from app.core.provider.formats import parse_messages
from tests.corpus import FILES, load

SWE_AGENT_EDIT = """Your proposed edit has introduced new syntax error(s). Please read this error \
message carefully and then retry editing the file.

ERRORS:
- E999 IndentationError: unexpected indent

This is how your edit would have looked if applied
-------------------------------------------------
[File: /repo/src/fields.py (1997 lines total)]
(1470 more lines above)
1471:        return value
-------------------------------------------------
Your changes have NOT been applied. Please fix your edit command and try again.
You either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code.
DO NOT re-run the same failed edit command. Running it again will lead to the same error."""

TRACEBACK = """Traceback (most recent call last):
  File "run.py", line 3, in <module>
    main()
  File "run.py", line 2, in main
    raise ValueError("bad date")
ValueError: bad date
exit status 1"""


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (SWE_AGENT_EDIT, "- E999 IndentationError: unexpected indent"),
        (TRACEBACK, "ValueError: bad date"),
        (
            "building...\nError: Cannot find module 'x'\n    at load",
            "Error: Cannot find module 'x'",
        ),
        ("src/a.ts:3:5 - error TS2322: Type 'string' is not assignable", None),
        ("bash: foo: command not found", "bash: foo: command not found"),
        ("Tool call timed out after 5000ms", "Tool call timed out after 5000ms"),
        ("Cancelled", "Cancelled"),
        ("ran 3 steps\nProcess exited with code 2", "Process exited with code 2"),
        ("fatal: not a git repository", "fatal: not a git repository"),
        ("error[E0308]: mismatched types\n --> src/main.rs:4:5", "error[E0308]: mismatched types"),
        ("Command not executed: the user declined.", "Command not executed: the user declined."),
        ("src/a.py:10:1: F401 `os` imported but unused", None),
    ],
)
def test_an_error_is_found_by_its_text_and_the_line_that_names_it_is_kept(
    text: str, line: str | None
) -> None:
    expected = line if line is not None else text.splitlines()[0]
    assert error_line(text) == expected
    assert error_line(text, is_error=True) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2 passed in 0.1s",
        "def parse(value):\n    except ValueError:\n        raise",
        "Exit code: 0",
        "The edit was applied.",
        "",
    ],
)
def test_ordinary_output_is_no_error(text: str) -> None:
    assert error_line(text) is None


def test_the_providers_flag_makes_any_text_an_error() -> None:
    assert error_line("something odd\nsecond line", is_error=True) == "something odd"
    assert error_line("", is_error=True) == "(no error text)"


@pytest.mark.parametrize(
    "text",
    ["DEBUG    timeout=10", "┃ Engine ┃ Error ┃", "Retrying with a longer timeout"],
)
def test_log_words_that_only_mention_errors_are_no_error(text: str) -> None:
    assert error_line(text) is None


def test_a_content_tools_output_is_an_error_only_by_its_first_lines() -> None:
    hits = "src/a.py:3: # ignore\nsrc/b.py:9: ok\nValueError: bad date"
    assert error_line(hits, tool="grep_search") is None
    assert error_line(hits, tool="run_terminal_cmd") == "ValueError: bad date"
    missing = "Error: file not found: src/c.py"
    assert error_line(missing, tool="read_file") == missing


def test_the_first_line_naming_an_error_is_kept_and_a_log_level_alone_names_nothing() -> None:
    text = (
        "collected 3 items\n"
        "FAILED tests/test_api.py::test_search - AssertionError: assert 1 == 2\n"
        "AssertionError: assert 1 == 2\n"
    )
    assert (
        error_line(text) == "FAILED tests/test_api.py::test_search - AssertionError: assert 1 == 2"
    )
    assert error_line("ERROR    retrying in 2s\nall done") is None


# The checks in front of the two unanchored searches are exact: a line is an error line
# with them exactly when it is one by the three patterns alone.
_PIECES = [
    "Error",
    "error",
    "ERROR",
    "Exception",
    "E999",
    "F401",
    "e123",
    "panic:",
    "fatal",
    "FAILED",
    "failed to",
    "exit code 2",
    "Exit Status: 3",
    "exited with code 1",
    "returned exit status 4",
    "Command Not Found",
    "no ſuch file or directory",
    "timed out",
    "TIMED OUT",
    "not executed",
    "non-zero exit",
    "permission denied",
    "src/a.ts:3:5",
    " - error TS2322: ",
    "a.py:3:1: E302 ",
    "a.py:3:1: W291 ",
    "E   ",
    "E",
    "  ",
    "FAILED tests/a.py::test_b",
    "tests/a.py::test_b FAILED",
    " - ",
    "ERROR collecting a.py",
    "--- FAIL: TestX",
    "test a::b ... FAILED",
    "● a › b",
    "Expected: 4",
    "Received: 5",
    "a_test.go:9: got",
    "Exception in thread ",
    "thread 'main' panicked at ",
    "npm ERR!",
    "3:7  error  ",
    "HTTP/1.1 404",
    "HTTP/2 200",
    "< ",
    "a.py:5: AssertionError",
    "[ERROR]",
    "error CS1002: ",
    "error c2065:",
    "make: *** ",
    "make[2]: *** ",
    "ValueError:",
    "os.OSError",
    ":",
    " ",
    "  ",
    "\t",
    "-",
    "[error]",
    "x",
    "K",
    "é",
    "1",
    "0",
]


def _reference(line: str) -> bool:
    return bool(
        failures._TEST_LINE.match(line)
        or failures._EXCEPTION.search(line)
        or failures._KEYWORD.search(line)
        or failures._FAILED.search(line)
    )


def _reference_error_line(text: str, is_error: bool | None = False, tool: str = "") -> str | None:
    """`error_line` as it was first written: every line stripped and searched with the three
    patterns. The fast one must agree with it on every text."""
    stub = failures._CLEARED_FAILURE.match(text)
    if stub is not None:
        return stub.group(1)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "(no error text)" if is_error else None
    content = not is_error and failures.is_content_tool(tool)
    if content:  # a content tool's first lines only, a bare tag joined within them
        lines = _reference_tags_joined(lines[: failures.CONTENT_STATUS_LINES + 1])
        lines = lines[: failures.CONTENT_STATUS_LINES]
    else:
        lines = _reference_tags_joined(lines)
    found = _reference_key_line(lines)
    # A result that opens with its own statement of the failure is named by that line.
    opens = not content and (is_error or found is not None)
    named = found is not None and failures._STATES.match(found)
    if opens and failures._opens_with_failure(lines[0]) and not named:
        return lines[0]
    if found is not None:
        return found
    return lines[0] if is_error else None


def _reference_tags_joined(lines: list[str]) -> list[str]:
    """A failure tag or keyword alone on its line (`<error>`, `Error:`) with the line after
    it, which says what failed."""
    out: list[str] = []
    for line in lines:
        if out and failures._BARE_TAG.match(out[-1]):
            out[-1] += f" {line}"
        else:
            out.append(line)
    return out


def _reference_key_line(lines: list[str]) -> str | None:
    if len(lines) == 1 and failures._STOPPED.match(lines[0]):
        return lines[0]
    if len(lines) > failures.MAX_SCANNED_LINES:
        half = failures.MAX_SCANNED_LINES // 2
        lines = [*lines[:half], *lines[-half:]]
    tests = [i for i, line in enumerate(lines) if failures._TEST_LINE.match(line)]
    if tests:
        summary = [i for i in tests if failures._SUMMARY.match(lines[i])]
        return _reference_failed_test(lines, (summary or tests)[0])
    starts = [i for i, line in enumerate(lines) if failures._TRACEBACK in line]
    if starts:
        exceptions = [
            (i, line)
            for i, line in enumerate(lines)
            if i >= starts[-1] and failures._EXCEPTION.search(line)
        ]
        named = [(i, line) for i, line in exceptions if failures._NAMED.match(line)]
        if named:
            at, line = named[-1]
            after = [text for i, text in exceptions if i > at and failures._STATES.search(text)]
            return f"{line}{failures.KEY_LINE_SEPARATOR}{after[-1]}" if after else line
        if exceptions:
            return exceptions[-1][1]

    def states(text: str) -> bool:
        return bool(failures._STATES.search(text)) and not failures._WEAK.match(text)

    for at, line in enumerate(lines):
        if _reference(line):
            if states(line):
                return line
            later = lines[at + 1 :]
            stated = next((text for text in later if states(text)), None)
            if stated is None and failures._WEAK.match(line):  # any line naming what failed
                names = (failures._KEYWORD.search, failures._EXCEPTION.search)
                stated = next((text for text in later if any(n(text) for n in names)), None)
            if stated is None or stated == line:
                return line
            return f"{line}{failures.KEY_LINE_SEPARATOR}{stated}"
    return None


def _reference_failed_test(lines: list[str], at: int) -> str:
    test = lines[at].strip("_ ")
    if failures._CARRIES_MESSAGE.match(test):
        return test

    def detail(line: str) -> bool:
        if failures._TEST_LINE.match(line) or failures._OUTCOME.match(line):
            return False
        return bool(failures._STATES.search(line) or failures._DETAIL.match(line))

    found = [i for i, line in enumerate(lines) if i != at and detail(line)]
    after = [i for i in found if i > at]
    if not found:
        return test
    said = lines[(after or found)[0]]
    following = (after or found)[0] + 1
    if said.startswith("Expected") and lines[following : following + 1] != []:
        said += f" {lines[following]}" if lines[following].startswith("Received") else ""
    return f"{test}{failures.KEY_LINE_SEPARATOR}{said}"


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_a_line_is_tried_with_the_patterns_its_hits_feed_and_decided_as_by_all_three(
    line: str,
) -> None:
    assert failures._names_error(line) == _reference(line)
    found = dict(failures._candidate_lines(line)) if "\n" not in line else {}
    if _reference(line) and found:
        assert failures._names_error(line, found[0])


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_a_line_the_patterns_match_is_always_a_candidate(line: str) -> None:
    if _reference(line) or failures._STOPPED.match(line.strip()):
        assert failures.may_name_error(line)
    lines = [part.strip() for part in line.splitlines() if part.strip()]
    named = [i for i, part in enumerate(lines) if _reference(part)]
    candidates = dict(failures._candidate_lines("\n".join(lines)))
    assert set(named) <= set(candidates)
    assert all(failures._names_error(lines[i], candidates[i]) for i in named)


_LINE_PIECES = [
    *_PIECES,
    "\n",
    "\r\n",
    "\r",
    "\u2028",
    "\x0c",
    "   ",
    "Traceback (most recent call last)",
    '  File "a.py", line 1',
    "Cancelled",
    "\u0130",
    "\u0131",
    "\u017f",
    "\u212a",
    "\u00df",
    "raise ValueError(msg)",
    "default_error_messages",
]


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.sampled_from(_LINE_PIECES), max_size=24).map("".join),
    st.sampled_from([False, True, None]),
    st.sampled_from(["", "bash", "read_file", "edit"]),
)
def test_the_fast_search_finds_the_same_line_as_the_line_by_line_search(
    text: str, is_error: bool | None, tool: str
) -> None:
    assert error_line(text, is_error, tool) == _reference_error_line(text, is_error, tool)


def test_every_corpus_tool_result_gives_the_same_line_as_the_line_by_line_search() -> None:
    checked = found = 0
    for path in FILES:
        messages = parse_messages(load(path), detect_format(load(path)))
        names = {call.id: call.name for m in messages for call in tool_uses(m)}
        for message in messages:
            for block in message.blocks():
                if isinstance(block, ToolResultBlock):
                    text, name = tool_result_text(block), names.get(block.tool_use_id, "")
                    expected = _reference_error_line(text, block.is_error, name)
                    assert error_line(text, block.is_error, name) == expected
                    checked += 1
                    found += expected is not None
    assert (checked, found) == (234, 31)


def test_a_content_tools_first_lines_are_found_past_a_long_line() -> None:
    head = "x" * (failures._PREFIX_CHARS + 10)
    assert error_line(f"{head}\nError: second", tool="read_file") == "Error: second"
    assert error_line(f"{head}\nline\nError: third", tool="read_file") is None
    assert error_line(f"{head}\nError: second\nmore", tool="read_file") == "Error: second"
    assert error_line(f"Error: early\n{head}", tool="read_file") == "Error: early"


def test_a_log_naming_several_errors_keeps_the_first_mention_and_the_first_statement() -> None:
    log = (
        "INFO     Querying engine: brave-news\n"
        "ERROR    Search with engine 'brave-news' failed: Engine\n"
        "         'brave-news': HTTP Status error: 429 -\n"
        "ERROR    Search with engine 'hasdata-google-light'\n"
        "         failed: Engine 'hasdata-google-light': HTTP\n"
        "         Status error: 401 - invalid api key\n"
        "         failed: Engine 'other': HTTP\n"
    )
    assert error_line(log) == (
        "'brave-news': HTTP Status error: 429 - | failed: Engine 'hasdata-google-light': HTTP"
    )


def test_a_line_that_states_the_error_from_its_start_is_kept_alone() -> None:
    text = "Error: Cannot find module 'x'\nlater: HTTP Status error: 500\nfailed: again"
    assert error_line(text) == "Error: Cannot find module 'x'"
    assert error_line("bash: foo: command not found\nall done") == "bash: foo: command not found"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # Gemini CLI's replace, unflagged in the OpenAI shape
        (
            "Failed to edit, 0 occurrences found for old_string in /p/a.go. No edits made.",
            "Failed to edit, 0 occurrences found for old_string in /p/a.go. No edits made.",
        ),
        # Claude Code's tool error tag
        (
            "<tool_use_error>File has not been read yet. Read it first before writing to it."
            "</tool_use_error>",
            "<tool_use_error>File has not been read yet. Read it first before writing to it."
            "</tool_use_error>",
        ),
        # Cline's and Roo Code's tool failure, the tag on its own line
        (
            "The tool execution failed with the following error:\n<error>\nError writing "
            "file: EACCES: permission denied\n</error>",
            "<error> Error writing file: EACCES: permission denied",
        ),
        # A status line, then the line that says what failed
        (
            "HTTP/2 502\nserver: nginx\n\n"
            "upstream error: connect() failed (111: Connection refused)",
            "HTTP/2 502 | upstream error: connect() failed (111: Connection refused)",
        ),
        # kubectl's and Docker's errors
        (
            'Error from server (NotFound): deployments.apps "api" not found',
            'Error from server (NotFound): deployments.apps "api" not found',
        ),
        (
            "Error response from daemon: No such container: web-1",
            "Error response from daemon: No such container: web-1",
        ),
        # Other languages
        (
            "Compilation…\nErreur : le module 'zod' est introuvable",
            "Erreur : le module 'zod' est introuvable",
        ),
        ("Fehler: Datei config.yml nicht gefunden", "Fehler: Datei config.yml nicht gefunden"),
        ("构建开始\n错误：找不到模块 react", "错误：找不到模块 react"),
    ],
)
def test_the_line_stating_a_failure_is_found_without_a_flag(text: str, line: str) -> None:
    assert error_line(text, False, "run_command") == line


def test_after_a_traceback_the_exception_and_what_the_program_said_of_it() -> None:
    text = (
        "Building wheel\n"
        "  Traceback (most recent call last):\n"
        '    File "setup.py", line 9, in <module>\n'
        "  LookupError: setuptools-scm was unable to detect version\n"
        "  [end of output]\n"
        "error: metadata-generation-failed\n"
        "hint: See above for output."
    )
    assert error_line(text, False, "shell") == (
        "LookupError: setuptools-scm was unable to detect version | "
        "error: metadata-generation-failed"
    )
