"""`python -m app serve`: the real process, its JSON log lines, request ids and limits."""

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


def start_serve(tmp_path: Path, **env: str) -> tuple[subprocess.Popen[str], int]:
    """`python -m app serve` on 127.0.0.1, once `/healthz` answers."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env={
            **os.environ,
            "COMPACT_DATA_DIR": str(tmp_path / "data"),
            "COMPACT_WORKDIR": str(tmp_path),
            "COMPACT_SUMMARIZER": "extractive",
            **env,
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return process, port
        except httpx.TransportError:
            assert process.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)


@pytest.mark.slow
def test_serve_writes_json_lines_with_the_request_id(tmp_path: Path) -> None:
    process, port = start_serve(tmp_path, COMPACT_LOG_FORMAT="json")
    try:
        response = httpx.post(
            f"http://127.0.0.1:{port}/count",
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


@pytest.mark.slow
def test_serve_limits_the_size_and_time_of_request_heads(tmp_path: Path) -> None:
    process, port = start_serve(
        tmp_path, COMPACT_MAX_HEADER_BYTES="2048", COMPACT_HEADER_TIMEOUT="0.5"
    )
    answers: list[bytes] = []
    try:
        for request in (b"GET /healthz HTTP/1.1\r\nX-Big: " + b"a" * 4096, b"GET / HTTP/1.1\r\n"):
            with socket.create_connection(("127.0.0.1", port)) as connection:
                connection.settimeout(10)
                connection.sendall(request)
                answer = b""
                while chunk := connection.recv(65536):
                    answer += chunk
                answers.append(answer.split(b"\r\n")[0])
    finally:
        process.terminate()
        process.communicate(timeout=START_TIMEOUT)
    assert answers == [
        b"HTTP/1.1 431 Request Header Fields Too Large",
        b"HTTP/1.1 408 Request Timeout",
    ]


@pytest.mark.slow
def test_serve_exits_3_when_it_cannot_listen(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        finished = subprocess.run(
            [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env={
                **os.environ,
                "COMPACT_DATA_DIR": str(tmp_path / "data"),
                "COMPACT_WORKDIR": str(tmp_path),
            },
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT,
        )
    assert finished.returncode == 3
    assert "address already in use" in finished.stderr


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
