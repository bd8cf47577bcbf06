"""The examples run against the real app on a loopback port."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from context_compact_client import ContextCompactClient

from app.adapters.tokenizer import TiktokenTokenizer
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service
from tests.live_server import serve_in_thread

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TOKEN = "example-t0ken"


@pytest.fixture
def load_example() -> Iterator[Callable[[str], ModuleType]]:
    """Imports `examples/{name}.py` (registered while the test runs: dataclasses need it)."""
    loaded: list[str] = []

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        loaded.append(spec.name)
        spec.loader.exec_module(module)
        return module

    yield load
    for name in loaded:
        del sys.modules[name]


def serve(tmp_path: Path, tokenizer: TiktokenTokenizer, **overrides: Any) -> Any:
    """The app with its defaults (the README's first command) on a loopback port."""
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        workdir=str(EXAMPLES / "workdir"),
        data_dir=str(tmp_path / "data"),
        summarizer="extractive",
        **overrides,
    )
    return serve_in_thread(create_app(settings, service=build_service(settings, tokenizer)))


@pytest.fixture
def service_url(tmp_path: Path, tokenizer: TiktokenTokenizer) -> Iterator[str]:
    with serve(tmp_path, tokenizer) as url:
        yield url


@pytest.fixture
def token_service_url(tmp_path: Path, tokenizer: TiktokenTokenizer) -> Iterator[str]:
    """A server that needs `Authorization: Bearer TOKEN`."""
    with serve(tmp_path, tokenizer, api_token=TOKEN) as url:
        yield url


def run_example(
    command: Sequence[str], url: str, token: str | None
) -> subprocess.CompletedProcess[str]:
    """Runs an example as a user would, configured by the environment only. The client is
    this checkout's (`clients/python`), as the agent loop finds it uninstalled."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPACT_")}
    env |= {"COMPACT_URL": url, "PYTHONPATH": str(ROOT / "clients" / "python")}
    if token is not None:
        env["COMPACT_API_TOKEN"] = token
    return subprocess.run(
        list(command), env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.slow
def test_the_agent_loop_script_compacts_twice_and_recalls_with_the_servers_token(
    token_service_url: str,
) -> None:
    done = run_example([sys.executable, str(EXAMPLES / "agent_loop.py")], token_service_url, TOKEN)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    compacted, recalled, _ = done.stdout.splitlines()
    turns = json.loads(compacted.removeprefix("compacted before turns "))
    assert len(turns) >= 2
    assert recalled.startswith("recalled ['Step 1'")


@pytest.mark.slow
def test_the_agent_loop_script_without_the_token_fails_naming_the_401(
    token_service_url: str,
) -> None:
    done = run_example([sys.executable, str(EXAMPLES / "agent_loop.py")], token_service_url, None)
    assert done.returncode == 1
    assert done.stderr == (
        "error: 401 unauthorized: this server needs an `Authorization: Bearer <token>` header\n"
    )


@pytest.mark.slow
def test_the_background_loop_script_applies_a_compaction_with_the_servers_token(
    token_service_url: str,
) -> None:
    script = str(EXAMPLES / "agent_loop_background.py")
    done = run_example([sys.executable, script], token_service_url, TOKEN)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    applied = int(done.stdout.split()[1])
    assert applied >= 1


@pytest.mark.slow
def test_the_curl_script_sends_the_servers_token(token_service_url: str) -> None:
    done = run_example(["bash", str(EXAMPLES / "curl.sh")], token_service_url, TOKEN)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-1].endswith(
        "df689ec28f0e444d2a0a1a8ccdc78e017f8f229dbef077ac56d039dd664bbd83"
    )


def test_the_agent_loop_compacts_when_told_and_keeps_the_new_input(
    service_url: str, load_example: Callable[[str], ModuleType]
) -> None:
    agent_loop = load_example("agent_loop")
    sent: list[int] = []

    def fake_model(messages: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, int]]:
        """Reports 1,000 input tokens a message: the window of 10,000 fills in 4 turns."""
        sent.append(len(messages))
        # A long reply: compacting a history of short ones would grow it (and be refused).
        reply = f"reply {len(sent)}: " + "a detail of the work so far. " * 100
        return {"role": "assistant", "content": reply}, {"input_tokens": 1000 * len(messages)}

    with ContextCompactClient(service_url, timeout=30) as client:
        session = agent_loop.run(client, fake_model, turns=9, context_window=10_000)
    # Turn t sends 2t messages until 8,000 tokens (80%) are reached: before turns 4 and 7.
    assert session.compacted_at == [4, 7]
    assert sent == [2, 4, 6, 8, 4, 6, 8, 4, 6]
    messages = session.messages
    assert [m["role"] for m in messages[:3]] == ["system", "user", "assistant"]
    assert messages[1]["content"].startswith("[Conversation compressed]\n\n")
    assert messages[3:] == [
        {"role": "user", "content": "Step 7: keep going."},
        {"role": "assistant", "content": "reply 8: " + "a detail of the work so far. " * 100},
        {"role": "user", "content": "Step 8: keep going."},
        {"role": "assistant", "content": "reply 9: " + "a detail of the work so far. " * 100},
    ]


def test_the_agent_loop_answers_recall_from_the_sessions_archives(
    service_url: str, load_example: Callable[[str], ModuleType]
) -> None:
    agent_loop = load_example("agent_loop")
    seen: list[list[dict[str, Any]]] = []

    def fake_model(messages: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, int]]:
        """After the first compaction, recalls what step 1 said once; replies otherwise."""
        seen.append(list(messages))
        compressed = str(messages[1].get("content", "")).startswith("[Conversation compressed]")
        asked = any(isinstance(m["content"], list) for m in messages)
        if compressed and not asked:
            call = {"type": "tool_use", "id": "r1", "name": "recall", "input": {"query": "Step 1"}}
            return {"role": "assistant", "content": [call]}, {"input_tokens": 100}
        # A long reply: compacting a history of short ones would grow it (and be refused).
        reply = f"reply {len(seen)}: " + "a detail of the work so far. " * 100
        return {"role": "assistant", "content": reply}, {"input_tokens": 1000 * len(messages)}

    with ContextCompactClient(service_url, timeout=30) as client:
        session = agent_loop.run(client, fake_model, turns=6, context_window=10_000)
    summary = session.messages[1]["content"]
    assert f"POST /sessions/{agent_loop.SESSION_ID}/recall" in summary
    [answer] = [
        m for m in session.messages if isinstance(m["content"], list) and m["role"] == "user"
    ]
    [result] = answer["content"]
    assert result["tool_use_id"] == "r1"
    assert result["content"].startswith("[archive ")
    assert ", message 2, user]\nStep 1: keep going." in result["content"]
    tools = json.loads((EXAMPLES / "recall_tool.json").read_text())
    assert tools["anthropic"] == agent_loop.RECALL_TOOL
    assert tools["openai"]["function"]["parameters"] == tools["anthropic"]["input_schema"]


@pytest.mark.slow
def test_the_curl_script_runs_every_call(service_url: str) -> None:
    done = subprocess.run(
        ["bash", str(EXAMPLES / "curl.sh")],
        env={**os.environ, "COMPACT_URL": service_url},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0] == "== POST /count"
    assert json.loads(lines[1])["message_count"] == 3
    assert json.loads(lines[3])["reason"] == "above_threshold"
    assert lines[-1] == (
        "11 messages archived, sha256 "
        "df689ec28f0e444d2a0a1a8ccdc78e017f8f229dbef077ac56d039dd664bbd83"
    )
    assert '"restored_files": [\n    {\n      "path": "tests/missing_colon.py"' in done.stdout
