"""Run the image's exact start command outside Docker and prove it serves.

CI has no Docker engine, so this reads the Dockerfile's final stage — its `ENTRYPOINT` +
`CMD` argv and its `ENV` — and starts that argv unchanged, with only the image's
environment, after mapping what differs between the image and this machine:

| in the image                        | here                                             |
|-------------------------------------|--------------------------------------------------|
| `/opt/venv` (the build stage's venv) | this interpreter's venv (`sys.prefix`, `.venv`) |
| `$PATH` of the python:3.11-slim base | this machine's `PATH`, after the venv's `bin`   |
| `LANG=C.UTF-8` of that base         | the same                                          |
| `COMPACT_WORKDIR=/workspace`        | a temporary directory                             |
| `COMPACT_DATA_DIR=/data`            | a temporary directory                             |
| `COMPACT_HOST=0.0.0.0`, `COMPACT_PORT=8080` | `127.0.0.1` and a free port               |
| working directory `/`               | a temporary directory (not the checkout)          |

So `python` in the argv resolves, through the image's own `PATH` rule, to the venv's
python where the app is installed, as `/opt/venv/bin/python` does in the image. Proxy
variables pointing at a closed loopback port are added: anything that tried to download at
start-up would fail. Then `/healthz` and `/readyz` must answer 200, a 1 MiB header line
must get 431 (the start command serves with the header limits), the image's `HEALTHCHECK`
command must exit 0, and the process must stop cleanly on SIGTERM.

Usage: python -m scripts.run_image_command [--dockerfile PATH] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from scripts.check_container import (
    healthcheck_command,
    image_command,
    parse_dockerfile,
    stage_env,
)

ROOT = Path(__file__).resolve().parent.parent
IMAGE_VENV = "/opt/venv"
CLOSED_PORT_PROXY = "http://127.0.0.1:9"
# What the python:3.11-slim base image sets that matters to a Python process.
BASE_IMAGE_ENV = {"LANG": "C.UTF-8"}
_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def host_env(
    image_env: Mapping[str, str],
    *,
    venv: str,
    workdir: str,
    data_dir: str,
    port: int,
) -> dict[str, str]:
    """The image's environment with its paths and address mapped to this machine."""
    env = {key: value.replace(IMAGE_VENV, venv) for key, value in image_env.items()}
    env |= {
        "COMPACT_WORKDIR": workdir,
        "COMPACT_DATA_DIR": data_dir,
        "COMPACT_HOST": "127.0.0.1",
        "COMPACT_PORT": str(port),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env |= dict.fromkeys(_PROXY_VARIABLES, CLOSED_PORT_PROXY)
    return env


# Our own requests go straight to the loopback server, whatever proxies this machine has.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str) -> tuple[int, object]:
    try:
        with _DIRECT.open(url, timeout=2) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def oversized_head_status(port: int) -> bytes:
    """The status line answered to a 1 MiB header line (431 when heads are limited)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        with contextlib.suppress(OSError):  # a server may stop reading at its limit
            connection.sendall(b"GET /healthz HTTP/1.1\r\nX-Big: " + b"a" * 2**20 + b"\r\n\r\n")
        answer = b""
        try:
            while len(answer) < 4096 and (chunk := connection.recv(4096)):
                answer += chunk
        except OSError as error:
            answer = answer or f"no answer: {error}".encode()
    return answer.split(b"\r\n", 1)[0]


def wait_until_serving(base: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    """Polls /healthz until it answers or the process dies (bounded by `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the start command exited with {process.returncode}")
        try:
            with _DIRECT.open(base + "/healthz", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"/healthz did not answer within {timeout:.0f} s")


def run(dockerfile_path: Path, timeout: float) -> list[str]:
    """Starts the image's command, checks it, stops it. Returns the problems found."""
    final = parse_dockerfile(dockerfile_path.read_text(encoding="utf-8"))[-1]
    argv = image_command(final)
    health = healthcheck_command(final)
    base_env = BASE_IMAGE_ENV | {"PATH": os.environ.get("PATH", os.defpath)}
    image_env = stage_env(final, base_env)
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="image-run-") as scratch:
        for name in ("workspace", "data", "cwd"):
            os.mkdir(os.path.join(scratch, name))
        port = free_port()
        env = host_env(
            image_env,
            venv=sys.prefix,
            workdir=os.path.join(scratch, "workspace"),
            data_dir=os.path.join(scratch, "data"),
            port=port,
        )
        executable = shutil.which(argv[0], path=env.get("PATH"))
        print(f"argv: {argv} ({argv[0]} -> {executable})")
        print(f"env: {json.dumps({k: v for k, v in env.items() if k != 'PATH'}, indent=1)}")
        process = subprocess.Popen(
            argv,
            env=env,
            cwd=os.path.join(scratch, "cwd"),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_serving(base, process, timeout)
            for path in ("/healthz", "/readyz"):
                status, body = _get(base + path)
                print(f"GET {path} -> {status} {json.dumps(body)}")
                if status != 200:
                    problems.append(f"GET {path} answered {status}: {body}")
            head_status = oversized_head_status(port)
            print(
                f"GET /healthz with a 1 MiB header line -> {head_status.decode(errors='replace')}"
            )
            if head_status.split(b" ")[1:2] != [b"431"]:
                problems.append(f"a 1 MiB header line was answered {head_status!r}, not 431")
            if health is None:
                problems.append("the Dockerfile has no HEALTHCHECK command")
            else:
                check = subprocess.run(health, env=env, capture_output=True, timeout=10)
                print(f"HEALTHCHECK {health[0]} ... -> exit {check.returncode}")
                if check.returncode != 0:
                    problems.append(f"the HEALTHCHECK exited {check.returncode}: {check.stderr!r}")
        except RuntimeError as exc:
            problems.append(str(exc))
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                output, _ = process.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                output, _ = process.communicate()
                problems.append("the process did not stop within 15 s of SIGTERM")
        # uvicorn re-raises SIGTERM after a graceful shutdown: -15 is a clean stop (Docker
        # reports it as 143).
        if process.returncode not in (0, -signal.SIGTERM) and not problems:
            problems.append(f"the process exited {process.returncode} after SIGTERM")
        if problems:
            print(output.decode(errors="replace"))
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dockerfile", type=Path, default=ROOT / "Dockerfile")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to start")
    args = parser.parse_args(argv)
    problems = run(args.dockerfile, args.timeout)
    for problem in problems:
        print(problem)
    if not problems:
        print("the image's start command serves: /healthz, /readyz and HEALTHCHECK answer")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
