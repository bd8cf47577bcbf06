"""`count` and `compact` at the command line import only what they need: not the web
framework, the server, the LLM SDKs, the PostgreSQL driver or the metrics client unless
the settings need one (they cost seconds of start-up on every call); `count` nothing of
the compaction pipeline, and `compact` with the default (extractive) summarizer not the
LLM summary check or the server's toolkit. No timing here: `python -m bench.cli_start`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REQUEST_FILE = ROOT / "examples" / "compact-request.json"
HEAVY = ("fastapi", "starlette", "anthropic", "openai", "uvicorn", "psycopg", "psycopg_pool")
PIPELINE = ("app.wiring.service", "app.service.compaction")
LLM_ONLY = ("app.core.summary.check", "app.service.toolkit", "prometheus_client")
# Runs each command in turn in one interpreter and prints, after each, what it has loaded
# of the watched modules (a module or any of its submodules).
PROBE = """
import json, sys
from app.__main__ import main
watched = json.loads(sys.argv[1])
loaded = {}
for argv in json.loads(sys.argv[2]):
    assert main(argv) == 0
    loaded[argv[0]] = sorted(m for m in sys.modules if m in watched or m.split(".")[0] in watched)
print(json.dumps(loaded))
"""


def loaded_by(commands: list[list[str]], env: dict[str, str]) -> dict[str, list[str]]:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            json.dumps([*HEAVY, *PIPELINE, *LLM_ONLY]),
            json.dumps(commands),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    found: dict[str, list[str]] = json.loads(done.stdout)
    return found


@pytest.mark.slow
def test_count_then_compact_load_no_framework_sdk_driver_or_more_than_they_use(
    tmp_path: Path,
) -> None:
    """With the Anthropic SDK's key in the environment, as an agent has it: the provider's
    count would use it, but only a count that asks for it loads the SDK."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("COMPACT_", "ANTHROPIC"))}
    env = clean | {"COMPACT_DATA_DIR": str(tmp_path / "data"), "ANTHROPIC_API_KEY": "sk-unused"}
    commands = [
        ["count", str(REQUEST_FILE), "-o", str(tmp_path / "count.json")],
        ["compact", str(REQUEST_FILE), "--force", "-o", str(tmp_path / "compact.json")],
    ]
    assert loaded_by(commands, env) == {"count": [], "compact": sorted(PIPELINE)}
    assert json.loads((tmp_path / "count.json").read_text())["token_count"] == 1933
    assert json.loads((tmp_path / "compact.json").read_text())["compacted"] is True
