"""`python -m app serve`: the real process, its JSON log lines and request ids."""

from __future__ import annotations

import importlib
import json
import os
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_serve_writes_json_lines_with_the_request_id(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "COMPACT_DATA_DIR": str(tmp_path / "data"),
        "COMPACT_WORKDIR": str(tmp_path),
        "COMPACT_SUMMARIZER": "extractive",
        "COMPACT_LOG_FORMAT": "json",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                httpx.get(f"{url}/healthz", timeout=1)
                break
            except httpx.TransportError:
                assert process.poll() is None, "the server exited"
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.05)
        response = httpx.post(
            f"{url}/count",
            json={"messages": [{"role": "user", "content": "hi"}]},
            headers={"X-Request-ID": "serve-test-1"},
        )
        assert response.headers["x-request-id"] == "serve-test-1"
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=START_TIMEOUT)
    lines = [json.loads(line) for line in stderr.splitlines()]
    logged = [(line["logger"], line["message"]) for line in lines]
    assert ("context_compact", "context compact ready") in logged
    assert ("uvicorn.error", "Application startup complete.") in logged
    request_lines = [line for line in lines if line["request_id"] == "serve-test-1"]
    assert [(line["message"], line["route"], line["status"]) for line in request_lines] == [
        ("request", "/count", 200)
    ]


def test_the_console_script_is_the_command_line_it_documents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    module, _, name = scripts["context-compact"].partition(":")
    command = getattr(importlib.import_module(module), name)
    with pytest.raises(SystemExit) as exited:
        command(["--help"])
    assert exited.value.code == 0
    usage = capsys.readouterr().out
    assert usage.startswith("usage: context-compact [-h] {serve,count,compact}")
    assert "  context-compact serve --port 8080\n" in usage
