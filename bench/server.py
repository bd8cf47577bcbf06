"""The real app served by uvicorn in a subprocess, optionally with a fake LLM summarizer.

`create_bench_app` is a uvicorn factory: settings come from the usual `COMPACT_*`
environment; `BENCH_LLM_DELAY` (seconds) swaps the summarizer for `SleepingLlm`.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from fastapi import FastAPI

from app.core.ports import SummaryRequest
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service

FAKE_SUMMARY = "## Goals & Decisions\n- (fake LLM summary)"


class SleepingLlm:
    """A summarizer that waits like an LLM call (without using any CPU) and answers."""

    name = "fake-llm"
    reads_prompt = True

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def summarize(self, request: SummaryRequest) -> str:
        await asyncio.sleep(self.delay)
        return FAKE_SUMMARY

    async def aclose(self) -> None:
        """No client to close."""


def create_bench_app() -> FastAPI:
    settings = Settings()
    delay = os.environ.get("BENCH_LLM_DELAY")
    summarizer = SleepingLlm(float(delay)) if delay is not None else None
    return create_app(settings, service=build_service(settings, summarizer=summarizer))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(
    workdir: Path, data_dir: Path, llm_delay: float | None = None, **env: str
) -> Iterator[tuple[str, int]]:
    """(base URL, pid) of a uvicorn server on 127.0.0.1; stopped on exit."""
    port = free_port()
    environ = {
        **os.environ,
        "COMPACT_WORKDIR": str(workdir),
        "COMPACT_DATA_DIR": str(data_dir),
        "COMPACT_SUMMARIZER": "extractive",
        "COMPACT_LOG_LEVEL": "warning",
        **env,
    }
    environ.pop("BENCH_LLM_DELAY", None)
    if llm_delay is not None:
        environ["BENCH_LLM_DELAY"] = str(llm_delay)
    command = [sys.executable, "-m", "uvicorn", "bench.server:create_bench_app", "--factory"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    process = subprocess.Popen(command, env=environ, cwd=Path(__file__).resolve().parents[1])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"server exited with {process.returncode}")
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start within 30 s")
            time.sleep(0.05)
        yield url, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
