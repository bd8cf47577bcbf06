"""Run the TypeScript client against a live service: start `python -m app serve` on
127.0.0.1 (a free port, temporary work and data directories, the offline summarizer, a
bearer token), wait for `/healthz`, run `clients/typescript/smoke.ts` and
`examples/client.ts` (an agent loop that must compact twice and recall once) with
`COMPACT_URL` and `COMPACT_API_TOKEN` set as a user would, then stop the server. Exits with
the first failure's code.

Needs `npm ci` in clients/typescript first (.ci/run does it).

Usage: python -m scripts.ts_client_smoke
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from scripts.run_image_command import free_port

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "clients" / "typescript"
RUNS = [["smoke.ts"], [str(ROOT / "examples" / "client.ts")]]


def wait_until_up(url: str, server: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode} before answering")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    raise SystemExit(f"the server did not answer {url}/healthz within {seconds:.0f} s")


def main() -> int:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        env = os.environ | {
            "COMPACT_WORKDIR": tmp,
            "COMPACT_DATA_DIR": str(Path(tmp) / "data"),
            "COMPACT_SUMMARIZER": "extractive",
            "COMPACT_LOG_LEVEL": "warning",  # the smoke test's lines, not one per request
            "NO_PROXY": "127.0.0.1,localhost",
        }
        env["COMPACT_API_TOKEN"] = "ts-smoke-token"
        serve = [sys.executable, "-m", "app", "serve", "--host", "127.0.0.1", "--port", str(port)]
        server = subprocess.Popen(serve, cwd=ROOT, env=env)
        try:
            wait_until_up(url, server)
            for run in RUNS:
                command = ["npx", "--no-install", "tsx", *run]
                done = subprocess.run(command, cwd=CLIENT, env=env | {"COMPACT_URL": url})
                if done.returncode != 0:
                    print(f"failed: {' '.join(command)}", file=sys.stderr)
                    return done.returncode
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    print("the TypeScript client answered correctly against a live service")
    return 0


if __name__ == "__main__":
    sys.exit(main())
