"""`context-compact count|compact`: the API's answers, without a server."""

from __future__ import annotations

import ast
import asyncio
import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager
from pydantic import ValidationError

from app.__main__ import main
from app.core.options.compact import CompactOptions
from app.core.vocabulary import Format
from app.main import create_app
from app.settings import Settings
from tests.builders import assistant, system, user
from tests.sent_numbers import ODD_NUMBERS, numbered_messages, tagged, with_numbers

ROOT = Path(__file__).resolve().parents[2]
REQUEST_FILE = ROOT / "examples" / "compact-request.json"
REQUEST = json.loads(REQUEST_FILE.read_text())
EXAMPLE_WORKDIR = ROOT / "examples" / "workdir"

pytestmark = pytest.mark.usefixtures("restore_logging")


def _strategy_error(value: str) -> str:
    """The model's own message, whichever strategies exist."""
    try:
        CompactOptions.model_validate({"strategy": value})
    except ValidationError as exc:
        return str(exc.errors()[0]["msg"])
    raise AssertionError(f"{value!r} is a strategy")


UNKNOWN_STRATEGY = _strategy_error("bogus")
OPENAI_REQUEST_FILE = ROOT / "examples" / "compact-request.openai.json"
BELOW_THRESHOLD_NOTE = (
    "not compacted (below_threshold): 1933 tokens, under 160000 (0.8 x a 200000-token "
    "window); give --context-window and --threshold for your model, or --force"
)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "COMPACT_DATA_DIR": str(tmp_path / "data"),
        "COMPACT_WORKDIR": str(EXAMPLE_WORKDIR),
        "COMPACT_SUMMARIZER": "extractive",
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


async def api_answer(path: str, body: dict[str, Any]) -> Any:
    """What the HTTP API answers, with the same (environment) settings."""
    app = create_app(Settings())
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.post(path, json=body)
    assert response.status_code == 200
    return response.json()


def run_in_process(
    capsys: pytest.CaptureFixture[str], *argv: str, stdin: str | None = None
) -> tuple[int, Any, str]:
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        code = main(list(argv))
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else None, err


def without_archive_id(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer but what differs from run to run: the archive's id, the summarizer's time."""
    cost = {**answer["summarizer_cost"], "seconds": "<time>"}
    return {**answer, "archive": {**answer["archive"], "id": "<new>"}, "summarizer_cost": cost}


def test_count_of_a_file_is_what_the_api_answers(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, answer, err = run_in_process(capsys, "count", str(REQUEST_FILE))
    assert (code, err) == (0, "")
    assert answer == asyncio.run(api_answer("/count", {"messages": REQUEST["messages"]}))
    assert (answer["message_count"], answer["format"], answer["exact"]) == (12, "anthropic", True)


@pytest.mark.slow
def test_compact_of_the_example_as_a_subprocess_is_what_the_api_answers(
    env: dict[str, str], tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "app", "compact", str(REQUEST_FILE)],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    answer = json.loads(done.stdout)
    expected = asyncio.run(api_answer("/compact", REQUEST))
    assert without_archive_id(answer) == without_archive_id(expected)
    assert answer["restored_files"] == [{"path": "tests/missing_colon.py", "token_count": 43}]
    archived = json.loads(
        gzip.decompress(
            (tmp_path / "data" / "archives" / f"{answer['archive']['id']}.json").read_bytes()
        )
    )
    assert archived["messages"] == REQUEST["messages"][1:]


def test_flags_override_the_fields_of_the_file(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    code, answer, err = run_in_process(
        capsys, "compact", str(REQUEST_FILE), "--no-force", "--output", str(out)
    )
    assert (code, answer) == (0, None)
    assert err == f"note: {BELOW_THRESHOLD_NOTE}\n"
    written = json.loads(out.read_text())
    assert (written["compacted"], written["reason"]) == (False, "below_threshold")
    assert written["messages"] == REQUEST["messages"]


def test_jsonl_on_stdin_counts_like_the_same_list(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    messages = [system("s"), user("hello there"), assistant("hi")]
    jsonl = "\n".join(json.dumps(m) for m in messages) + "\n"
    code, from_jsonl, _ = run_in_process(capsys, "count", stdin=jsonl)
    assert code == 0
    code, from_list, _ = run_in_process(capsys, "count", "-", stdin=json.dumps(messages))
    assert from_jsonl == from_list
    assert from_jsonl["message_count"] == 3


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (
            ["count"],
            '[{"role": "user", "content": "hi"}, {"role": "bogus", "content": "x"}]',
            "messages[1].role: Input should be 'system', 'user' or 'assistant'",
        ),
        (
            ["count"],
            "",
            "no input: expected a JSON list of messages, a JSON object with "
            "`messages`, or JSONL (a message a line)",
        ),
        (["count"], "[1,", "invalid JSON: Expecting value: line 1 column 4 (char 3)"),
        (
            ["count"],
            '{"role": "user", "content": "a"}\n{"role": \n',
            "line 2: invalid JSON: Expecting value: line 1 column 10 (char 9)",
        ),
        (
            ["count"],
            '{"source": "x"}',
            "expected a JSON list of messages, a JSON object "
            "with `messages`, or JSONL (a message a line)",
        ),
        (
            ["compact", "--strategy", "bogus"],
            '[{"role": "user", "content": "a"}]',
            f"options.strategy: {UNKNOWN_STRATEGY}",
        ),
        (
            ["compact", "--session-id", "no spaces allowed"],
            '[{"role": "user", "content": "a"}]',
            "session_id: String should match pattern '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$'",
        ),
        (
            ["compact"],
            '[{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}]',
            "messages[0]: first_message_user: the first message must be user",
        ),
        (
            ["compact"],
            '[{"role": "user", "content": "a \\udc80"}]',
            "messages[0].content: a lone surrogate escape (such as \\udc80) is not text: "
            "it has no UTF-8 form",
        ),
    ],
)
def test_bad_input_exits_2_naming_the_problem(
    env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    stdin: str,
    message: str,
) -> None:
    code, answer, err = run_in_process(capsys, *argv, stdin=stdin)
    assert (code, answer, err) == (2, None, f"error: {message}\n")


def test_a_missing_file_exits_2(env: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, answer, err = run_in_process(capsys, "count", "no/such.json")
    assert (code, answer) == (2, None)
    assert err == (
        "error: cannot read no/such.json: [Errno 2] No such file or directory: 'no/such.json'\n"
    )


def test_an_unwritable_output_exits_2(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "missing-dir" / "out.json"
    code, answer, err = run_in_process(capsys, "count", str(REQUEST_FILE), "-o", str(target))
    assert (code, answer) == (2, None)
    assert err == (
        f"error: cannot write {target}: [Errno 2] No such file or directory: '{target}'\n"
    )


def test_a_context_window_and_threshold_compact_without_force_as_the_api_does(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compact", str(REQUEST_FILE), "--no-force", "--context-window", "3000"]
    code, answer, err = run_in_process(capsys, *argv, "--threshold", "0.5")
    assert (code, err) == (0, "")
    assert (answer["compacted"], answer["reason"], answer["token_count"]) == (True, None, 1933)
    body = {**REQUEST, "force": False, "options": {"context_window": 3000, "threshold": 0.5}}
    expected = asyncio.run(api_answer("/compact", body))
    assert without_archive_id(answer) == without_archive_id(expected)


def test_a_window_the_list_stays_under_says_why_it_was_not_compacted(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compact", str(REQUEST_FILE), "--no-force", "--context-window", "4000"]
    code, answer, err = run_in_process(capsys, *argv, "--threshold", "0.5")
    assert (code, answer["compacted"], answer["reason"]) == (0, False, "below_threshold")
    assert err == (
        "note: not compacted (below_threshold): 1933 tokens, under 2000 (0.5 x a 4000-token "
        "window); give --context-window and --threshold for your model, or --force\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["count", str(REQUEST_FILE), "--format", "openai"],
            "--format openai, but messages[2].content[1] (tool_use) is an Anthropic Messages "
            "block; use --format anthropic or auto",
        ),
        (
            ["compact", str(REQUEST_FILE), "--format", "openai"],
            "--format openai, but messages[2].content[1] (tool_use) is an Anthropic Messages "
            "block; use --format anthropic or auto",
        ),
        (
            ["compact", str(OPENAI_REQUEST_FILE), "--format", "anthropic"],
            "--format anthropic, but the messages are in the OpenAI Chat Completions shape "
            "(a tool or developer role, `tool_calls`, `tool_call_id` or an OpenAI-only "
            "content part); use --format openai or auto",
        ),
    ],
)
def test_a_format_the_file_contradicts_is_refused_not_converted(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, answer, err = run_in_process(capsys, *argv)
    assert (code, answer, err) == (2, None, f"error: {message}\n")


def test_the_matching_format_is_accepted_either_way(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, anthropic, _ = run_in_process(capsys, "count", str(REQUEST_FILE), "--format", "anthropic")
    assert (code, anthropic["format"]) == (0, "anthropic")
    code, openai, _ = run_in_process(
        capsys, "count", str(OPENAI_REQUEST_FILE), "--format", "openai"
    )
    assert (code, openai["format"]) == (0, "openai")


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--threshold", "1.5", "argument --threshold: must be in (0, 1], got 1.5"),
        ("--threshold", "half", "argument --threshold: expected a number in (0, 1], got 'half'"),
        ("--context-window", "0", "argument --context-window: must be greater than 0, got 0"),
    ],
)
def test_an_out_of_range_window_or_threshold_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["compact", str(REQUEST_FILE), flag, value])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.endswith(f"context-compact compact: error: {message}\n")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "context-compact compact session.json --context-window 32000 --threshold 0.5"),
        (["count"], "context-compact count session.jsonl --format openai"),
        (["compact"], "--context-window TOKENS"),
        (["compact"], "context-compact compact session.json --force --strategy prune"),
        (["serve"], "COMPACT_API_TOKEN=s3cret context-compact serve"),
    ],
)
def test_help_shows_examples(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--help"])
    assert stopped.value.code == 0
    assert expected in capsys.readouterr().out


def _imported_by(module: str) -> set[str]:
    tree = ast.parse((ROOT / "app" / f"{module}.py").read_text(encoding="utf-8"))
    return {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }


def test_the_cli_calls_the_service_not_routes_or_web_framework_exceptions() -> None:
    imported = {name: _imported_by(f"cli/{name}") for name in ("reading", "count", "compact")}
    forbidden = ("fastapi", "starlette", "app.api.routes", "app.api.errors", "app.api.dialect")
    assert {
        name: [m for m in found if m.startswith(forbidden)] for name, found in imported.items()
    } == {
        "reading": [],
        "count": [],
        "compact": [],
    }
    assert "app.service.counting" in imported["count"]
    assert "app.service.compaction" in imported["compact"]


def test_a_format_in_the_file_that_its_messages_contradict_is_refused_too(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    body = json.dumps({**REQUEST, "format": "openai"})
    code, answer, err = run_in_process(capsys, "compact", stdin=body)
    assert (code, answer) == (2, None)
    assert err == (
        "error: the file's `format` openai, but messages[2].content[1] (tool_use) is an "
        "Anthropic Messages block; use --format anthropic or auto\n"
    )


@pytest.mark.parametrize("fmt", ["anthropic", "openai"])
def test_compact_gives_numbers_back_as_sent(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], fmt: Format
) -> None:
    body = with_numbers({"messages": numbered_messages(fmt)}, ODD_NUMBERS[:6])
    code = main_with_stdin(["compact", "-"], body.decode())
    out, err = capsys.readouterr()
    assert code == 0
    assert err.startswith("note: not compacted (below_threshold)")
    assert tagged(out)["messages"] == tagged(body)["messages"]


def test_an_over_long_number_exits_2_naming_where_it_sits(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    numbers = ["1", "2", "9" * 5000, "4", "5", "6"]
    body = with_numbers({"messages": numbered_messages("anthropic")}, numbers)
    code, answer, err = run_in_process(capsys, "count", "-", stdin=body.decode())
    assert (code, answer) == (2, None)
    assert err == (
        "error: messages[2].content[1].input.pair[1]: a number of 5000 characters; "
        "at most 1000 are accepted\n"
    )


def main_with_stdin(argv: list[str], stdin: str) -> int:
    sys.stdin = io.StringIO(stdin)
    try:
        return main(argv)
    finally:
        sys.stdin = sys.__stdin__


def _sdk_body() -> dict[str, Any]:
    """The example's conversation as an Anthropic SDK sends it: a top-level system prompt,
    tools and the SDK's own fields."""
    head, *rest = REQUEST["messages"]
    return {
        "model": "claude-sonnet-4-5-20250929",
        "max_tokens": 2048,
        "system": head["content"],
        "tools": [{"name": "read_file", "input_schema": {"type": "object"}}],
        "thinking": {"type": "disabled"},
        "messages": rest,
        "force": True,
    }


@pytest.mark.slow
def test_an_sdk_request_file_is_counted_and_compacted_as_the_api_does(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    body = _sdk_body()
    path = tmp_path / "request.json"
    path.write_text(json.dumps(body))
    code, counted, err = run_in_process(capsys, "count", str(path))
    assert (code, err) == (0, "")
    expected = asyncio.run(api_answer("/count", {k: v for k, v in body.items() if k != "force"}))
    assert counted == expected
    assert counted["exact"] is False
    assert counted["parts"]["tools"] > 0
    code, answer, err = run_in_process(capsys, "compact", str(path))
    assert (code, err) == (0, "")
    assert without_archive_id(answer) == without_archive_id(
        asyncio.run(api_answer("/compact", body))
    )
    assert answer["request"]["system"] == body["system"]
    # the session ends with the harness's "Please continue." beside the last results: kept
    # last, so no `Continue.` is added
    assert answer["request"]["messages"] == answer["messages"]
    assert answer["messages"][-1]["content"] == [body["messages"][-1]["content"][-1]]
    assert list(answer["request"]) == [k for k in body if k != "force"]  # as the SDK sent it


@pytest.mark.slow
def test_the_console_script_leaves_with_its_answer_flushed_and_its_exit_code(
    env: dict[str, str], tmp_path: Path
) -> None:
    """`run` ends `count` and `compact` without the interpreter's teardown: the answer on
    stdout, the note or error on stderr and the exit code are still all there."""

    def console(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        script = "from app.__main__ import run; run()"
        return subprocess.run(
            [sys.executable, "-c", script, *argv],
            cwd=ROOT,
            env={**os.environ, **env},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    counted = console("count", str(REQUEST_FILE))
    assert (counted.returncode, counted.stderr) == (0, "")
    assert json.loads(counted.stdout)["token_count"] == 1933
    kept = console("compact", str(REQUEST_FILE), "--no-force")
    assert (kept.returncode, kept.stderr) == (0, f"note: {BELOW_THRESHOLD_NOTE}\n")
    assert json.loads(kept.stdout)["reason"] == "below_threshold"
    refused = console("count", stdin="[1,")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == "error: invalid JSON: Expecting value: line 1 column 4 (char 3)\n"


@pytest.mark.parametrize("command", [["count", "-"], ["serve"]])
def test_a_setting_that_is_not_valid_json_is_one_line_naming_its_variable(
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: list[str],
) -> None:
    monkeypatch.setenv("COMPACT_MODELS", '{"my-model": {"context_window": 32000,}')
    code, answer, err = run_in_process(capsys, *command, stdin="[]")
    assert (code, answer) == (2, None)
    assert err == (
        "error: configuration: COMPACT_MODELS: not valid JSON (Expecting property name "
        "enclosed in double quotes: line 1 column 39 (char 38))\n"
    )


def test_valid_json_of_the_wrong_shape_names_the_variable_too(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMPACT_MODELS", '{"my-model": {"context_window": "big"}}')
    code, _, err = run_in_process(capsys, "count", "-", stdin="[]")
    assert code == 2
    assert err.startswith("error: configuration: COMPACT_MODELS: ")
    assert err.count("\n") == 1


def test_an_output_budget_that_fills_the_window_exits_2_naming_it(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    body = {**REQUEST, "model": "claude-sonnet-4-5", "max_tokens": 250_000}
    code, answer, err = run_in_process(capsys, "compact", "-", stdin=json.dumps(body))
    assert (code, answer) == (2, None)
    assert err == (
        "error: max_tokens: max_tokens 250000 leaves no room for input in the "
        "200000-token context window\n"
    )
