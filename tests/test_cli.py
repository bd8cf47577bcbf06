"""`python -m app count|compact`: the API's answers, without a server."""

from __future__ import annotations

import asyncio
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
from app.core.compaction import CompactOptions
from app.main import create_app
from app.settings import Settings
from tests.builders import assistant, system, user

ROOT = Path(__file__).resolve().parent.parent
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
    return {**answer, "archive": {**answer["archive"], "id": "<new>"}}


def test_count_of_a_file_is_what_the_api_answers(
    env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, answer, err = run_in_process(capsys, "count", str(REQUEST_FILE))
    assert (code, err) == (0, "")
    assert answer == asyncio.run(api_answer("/count", {"messages": REQUEST["messages"]}))
    assert (answer["message_count"], answer["format"], answer["exact"]) == (12, "anthropic", True)


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
        (tmp_path / "data" / "archives" / f"{answer['archive']['id']}.json").read_text()
    )
    assert archived["messages"] == REQUEST["messages"][1:]


def test_flags_override_the_fields_of_the_file(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    code, answer, err = run_in_process(
        capsys, "compact", str(REQUEST_FILE), "--no-force", "--output", str(out)
    )
    assert (code, answer, err) == (0, None, "")
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
