"""Failures stated in ordinary (unflagged) tool output, per ecosystem: the line kept states
the failure and, for a test run, the test it belongs to."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.history.failures import error_line

DATA = Path(__file__).resolve().parents[2] / "data" / "failures"


@pytest.mark.parametrize(
    ("name", "line"),
    [
        (
            "pytest-assert.txt",
            "FAILED tests/test_dates.py::test_parse_iso - AssertionError: assert 2 == 3",
        ),
        (
            "pytest-collect.txt",
            "ERROR collecting tests/test_client.py"
            " | E   ModuleNotFoundError: No module named 'respx'",
        ),
        (
            "pytest-verbose.txt",
            "tests/test_api.py::test_search FAILED                                    [100%]"
            " | E       assert 422 == 200",
        ),
        (
            "pytest-wrapped.txt",  # the summary, not the progress line; its message wrapped
            "FAILED tests/unit/web/test_api.py::test_search_with_mock_engine -"
            " | AssertionError: assert 1 == 2",
        ),
        ("jest.txt", "● cart › applies the discount | Expected: 90 Received: 100"),
        ("go-test.txt", "--- FAIL: TestTotal (0.00s) | cart_test.go:21: total = 100, want 90"),
        (
            "cargo-test.txt",
            "test tests::totals ... FAILED | thread 'tests::totals' panicked at src/lib.rs:31:9:",
        ),
        ("mvn.txt", "[ERROR] COMPILATION ERROR :"),
        ("curl-500.txt", "< HTTP/1.1 500 Internal Server Error"),
    ],
)
def test_a_test_or_build_log_keeps_the_failed_test_and_how_it_failed(name: str, line: str) -> None:
    assert error_line((DATA / name).read_text(encoding="utf-8")) == line


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            "    def test_total():\n>       assert total([1, 2]) == 4\nE       assert 3 == 4\n\n"
            "tests/test_sum.py:5: AssertionError",
            "E       assert 3 == 4",
        ),
        (
            '  File "cli.py", line 8\n    def run(:\n            ^\nSyntaxError: invalid syntax',
            "SyntaxError: invalid syntax",
        ),
        (
            'Traceback (most recent call last):\n  File "fetch.py", line 9, in <module>\n'
            "    response.raise_for_status()\n"
            "httpx.HTTPStatusError: Client error '404 Not Found' for url 'https://api.test/v1/x'\n"
            "For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/404",
            "httpx.HTTPStatusError: Client error '404 Not Found' for url 'https://api.test/v1/x'",
        ),
        (
            "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: https://api.test/",
            "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: https://api.test/",
        ),
        (
            "int('x')\nValueError: invalid literal for int() with base 10: 'x'",
            "ValueError: invalid literal for int() with base 10: 'x'",
        ),
        (
            "src/cart.ts(12,5): error TS2345: Argument of type 'string' is not assignable.\n"
            "Found 1 error in src/cart.ts:12",
            "src/cart.ts(12,5): error TS2345: Argument of type 'string' is not assignable.",
        ),
        (
            "goroutine 1 [running]:\npanic: runtime error: index out of range [3] with length 3\n"
            "main.main()\n\t/app/main.go:5 +0x1d\nexit status 2",
            "panic: runtime error: index out of range [3] with length 3",
        ),
        (
            "error[E0382]: borrow of moved value: `items`\n --> src/cart.rs:4:20",
            "error[E0382]: borrow of moved value: `items`",
        ),
        (
            'Exception in thread "main" java.lang.NullPointerException: Cannot invoke '
            '"String.length()"\n\tat shop.Main.main(Main.java:5)',
            'Exception in thread "main" java.lang.NullPointerException: Cannot invoke '
            '"String.length()"',
        ),
        ("$ gcloud auth login\nbash: gcloud: command not found", "bash: gcloud: command not found"),
        (
            "cat: deploy.yaml: No such file or directory",
            "cat: deploy.yaml: No such file or directory",
        ),
        ("bash: ./deploy.sh: Permission denied", "bash: ./deploy.sh: Permission denied"),
        ("HTTP/2 403\ncontent-type: application/json\n\n{}", "HTTP/2 403"),
        (
            "main.c: In function 'main':\nmain.c:12:5: error: 'count' undeclared\n"
            "   12 |     count = 1;",
            "main.c:12:5: error: 'count' undeclared",
        ),
        (
            "app/a.py:3:1: E501 Line too long (120 > 88)\nFound 1 error.",
            "app/a.py:3:1: E501 Line too long (120 > 88)",
        ),
        ("app/a.py:7:1: W291 trailing whitespace", "app/a.py:7:1: W291 trailing whitespace"),
        (
            "app/a.py:9:5: UP006 Use `list` instead of `List`",
            "app/a.py:9:5: UP006 Use `list` instead of `List`",
        ),
        (
            "app/a.py:10: error: Incompatible types in assignment  [assignment]\n"
            "Found 1 error in 1 file (checked 3 source files)",
            "app/a.py:10: error: Incompatible types in assignment  [assignment]",
        ),
        (
            "/repo/src/cart.js\n"
            "  3:7  error  'total' is assigned a value but never used  no-unused-vars\n\n"
            "✖ 1 problem (1 error, 0 warnings)",
            "3:7  error  'total' is assigned a value but never used  no-unused-vars",
        ),
        ("npm ERR! code ENOENT\nnpm ERR! syscall open", "npm ERR! code ENOENT"),
        (
            "  Determining projects to restore...\n"
            "Program.cs(5,13): error CS1002: ; expected [/src/Shop.csproj]\nBuild FAILED.",
            "Program.cs(5,13): error CS1002: ; expected [/src/Shop.csproj]",
        ),
        (
            "main.cpp(12): error C2065: 'total': undeclared identifier",
            "main.cpp(12): error C2065: 'total': undeclared identifier",
        ),
        (
            "cc -c shop.c\nmake: *** [Makefile:12: shop.o] Error 1",
            "make: *** [Makefile:12: shop.o] Error 1",
        ),
    ],
)
def test_a_failure_in_ordinary_output_is_found_by_what_it_says(text: str, line: str) -> None:
    assert error_line(text) == line


@pytest.mark.parametrize(
    "text",
    [
        "0 errors",
        "Found 0 errors in 3 files",
        "no errors found",
        "Success: no issues found in 3 source files",
        "All checks passed!",
        "app/error_handler.py\napp/errors.py",
        "python run.py --on-error=skip",
        "  raise_on_error: false\n  errors = []",
        "def handle_error(e):\n    return None",
        "12 passed in 0.31s",
        "tests/test_api.py::test_health PASSED                                    [100%]",
        "test tests::parses ... ok\ntest result: ok. 1 passed; 0 failed",
        "--- PASS: TestParse (0.00s)\nok  \texample.com/shop\t0.004s",
        "Tests:       6 passed, 6 total",
        "HTTP/1.1 200 OK\ncontent-length: 2",
        'INFO HTTP Request: GET https://api.test/v1/search\n     "HTTP/1.1 400 Bad Request"',
        "- `HTTP/1.1 404` is what the API answers for an unknown id",
        "> GET /v1/health HTTP/1.1\n< HTTP/1.1 204 No Content",
        "[INFO] BUILD SUCCESS",
        "Expected: the cart total, in cents",
        "see docs/errors.md for every error code",
        "make: Nothing to be done for 'all'.",
        "Build succeeded.\n    0 Warning(s)\n    0 Error(s)",
    ],
)
def test_a_line_that_merely_mentions_an_error_is_no_failure(text: str) -> None:
    assert error_line(text) is None


# Structured results and placeholder fields, as the harnesses write them (issue 48).
GEMINI_OK = (
    "Command: ls\nDirectory: (root)\nStdout: a.py\nStderr: (none)\nError: (none)\n"
    "Exit Code: 0\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 123"
)
GEMINI_FAILED = (
    "Command: pytest -q\nDirectory: (root)\nStdout: ..F\nFAILED tests/t.py::test_x - "
    "AssertionError: assert 1 == 2\nStderr: (none)\nError: (none)\nExit Code: 1\n"
    "Signal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 123"
)


@pytest.mark.parametrize(
    ("text", "tool", "line"),
    [
        # Gemini CLI's shell tool: `Error: (none)` says nothing failed
        (GEMINI_OK, "run_shell_command", None),
        (
            GEMINI_FAILED,
            "run_shell_command",
            "FAILED tests/t.py::test_x - AssertionError: assert 1 == 2",
        ),
        # Gemini CLI's functionResponse of a failed call
        (
            '{"error": "File not found: /repo/src/app.py"}',
            "read_file",
            "File not found: /repo/src/app.py",
        ),
        (
            '{"output": "Command: make\\nError: (none)\\nExit Code: 2"}',
            "run_shell_command",
            "Exit Code: 2",
        ),
        ('{"output": "all good"}', "run_shell_command", None),
        # Roo Code's toolError and refusal
        (
            '{"status":"error","message":"The tool execution failed","error":"Error reading '
            'file: ENOENT: no such file or directory, open /repo/a.py"}',
            "read_file",
            "Error reading file: ENOENT: no such file or directory, open /repo/a.py",
        ),
        (
            '{"status":"error","message":"The tool execution failed","error":"Error executing '
            'command:\\nTraceback (most recent call last):\\n  File \\"x.py\\"\\nKeyError: 3"}',
            "execute_command",
            "KeyError: 3",
        ),
        (
            '{"status":"denied","message":"The user denied this operation."}',
            "write_to_file",
            "The user denied this operation.",
        ),
        # Codex's shell output with its exit code
        (
            '{"output": "boom\\nValueError: bad input", "metadata": {"exit_code": 1}}',
            "shell",
            "ValueError: bad input",
        ),
        ('{"output": "", "metadata": {"exit_code": 127}}', "shell", "exit code 127"),
        # Cline's older toolError, in a content tool's first lines
        (
            "The tool execution failed with the following error:\n<error>\nError reading "
            "file: Could not find file\n</error>",
            "read_file",
            "<error> Error reading file: Could not find file",
        ),
        # an object that is no harness status is read as text
        ('{"name": "x", "error": null}', "read_file", None),
        # OpenHands' editor: `ERROR:` alone, what failed on the next line
        (
            "ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in "
            "/workspace/a.py.",
            "str_replace_editor",
            "ERROR: No replacement was performed, old_str `x` did not appear verbatim in "
            "/workspace/a.py.",
        ),
        # Codex: apply_patch's failure, and the shell tool's exit code with the error after
        (
            "apply_patch verification failed: Failed to find expected lines in src/a.rs",
            "apply_patch",
            "apply_patch verification failed: Failed to find expected lines in src/a.rs",
        ),
        (
            "Exit code: 1\nWall time: 0.3 seconds\nOutput:\nerror[E0308]: mismatched types",
            "shell",
            "Exit code: 1 | error[E0308]: mismatched types",
        ),
        ("Exit code: 2\nWall time: 1 seconds\nOutput:\nnothing here", "shell", "Exit code: 2"),
        ("3 passed, 0 failed: all good", "shell", None),
    ],
)
def test_the_failure_a_harness_reports(text: str, tool: str, line: str | None) -> None:
    assert error_line(text, False, tool) == line


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # a rejected edit: the diff after the refusal quotes an error message and an exit code
        (
            "User rejected update to tools/check.py\n"
            '  40 +    print(f"Hook validation error: {e}", file=sys.stderr)\n'
            "  41 +    sys.exit(2)  # Exit code 2 blocks the tool call",
            "User rejected update to tools/check.py",
        ),
        (
            "The user doesn't want to proceed with this tool use. The tool use was rejected.\n"
            "old: raise ValueError: bad input",
            "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        ),
        # an edit that found nothing: the text it looked for follows and mentions a failure
        (
            "Failed to edit, 0 occurrences found for old_string (## Plan\n"
            "- fix the permission denied when creating the cache directory)",
            "Failed to edit, 0 occurrences found for old_string (## Plan",
        ),
        # the harness's opening error line, then a traceback: the exception by name is kept
        (
            "Error: the command failed\nTraceback (most recent call last):\n"
            "  File \"a.py\", line 1, in <module>\nKeyError: 'name'",
            "KeyError: 'name'",
        ),
        # an exit status opens the output: what failed, named later, goes beside it
        (
            "Exit code 1\nsrc/a.ts:3:5 - error TS2322: bad type",
            "Exit code 1 | src/a.ts:3:5 - error TS2322: bad type",
        ),
    ],
)
def test_a_flagged_result_s_own_failure_line_is_kept_over_what_it_quotes(
    text: str, line: str
) -> None:
    assert error_line(text, True, "Edit") == line


def test_unflagged_the_same_rejection_is_named_by_its_opening_line_too() -> None:
    """The OpenAI shape flags nothing: the quoted exit code makes it an error, the opening
    line names it, as in the Anthropic shape."""
    text = "User rejected update to a.py\n  3 +    sys.exit(2)  # Exit code 2 blocks the call"
    assert error_line(text, False, "Edit") == "User rejected update to a.py"
