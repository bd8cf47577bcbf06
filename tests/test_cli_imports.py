"""`count` and `compact` at the command line import only what they need: not the web
framework, the server, the LLM SDKs or the PostgreSQL driver (they cost seconds of start-up
on every call)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("fastapi", "starlette", "anthropic", "openai", "uvicorn", "psycopg", "psycopg_pool")
PROBE = """
import json, sys
from app.__main__ import main
code = main(sys.argv[1:])
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(%r))
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


@pytest.mark.slow
@pytest.mark.parametrize("command", [["count"], ["compact", "--force"]])
def test_the_command_line_runs_without_the_web_framework_or_the_sdks(
    tmp_path: Path, command: list[str]
) -> None:
    session = tmp_path / "session.json"
    session.write_text(
        json.dumps(
            [
                {"role": "user", "content": "Fix the failing test in tests/test_app.py."},
                {"role": "assistant", "content": "Fixed: the fixture had a typo."},
                {"role": "user", "content": "Thanks. Now run the linter."},
            ]
        ),
        encoding="utf-8",
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("COMPACT_", "ANTHROPIC"))}
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,), *command, str(session)],
        cwd=ROOT,
        env={**clean, "COMPACT_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "heavy": []}, done.stderr
    assert json.loads(done.stdout)["format"] == "anthropic"
