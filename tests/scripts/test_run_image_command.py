from __future__ import annotations

import json
import sys
from pathlib import Path

from scripts.run_image_command import CLOSED_PORT_PROXY, host_env, run

# A stand-in for the app: answers /healthz, and /readyz with the status given in argv.
FAKE_SERVER = """\
import http.server, json, os, sys

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        status = {"/healthz": 200, "/readyz": int(sys.argv[1])}.get(self.path, 404)
        body = json.dumps({"path": self.path}).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

http.server.HTTPServer(
    (os.environ["COMPACT_HOST"], int(os.environ["COMPACT_PORT"])), Handler
).serve_forever()
"""


def image(tmp_path: Path, readyz_status: int) -> Path:
    """A Dockerfile shaped like ours whose CMD starts the fake server."""
    server = tmp_path / "server.py"
    server.write_text(FAKE_SERVER, encoding="utf-8")
    health = (
        "import os, sys, urllib.request; "
        "url = 'http://127.0.0.1:' + os.environ['COMPACT_PORT'] + '/healthz'; "
        "sys.exit(0 if urllib.request.urlopen(url, timeout=2).status == 200 else 1)"
    )
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "FROM python:3.11-slim\n"
        "ENV PATH=/opt/venv/bin:$PATH COMPACT_HOST=0.0.0.0 COMPACT_PORT=8080\n"
        f"HEALTHCHECK CMD {json.dumps(['python', '-c', health])}\n"
        f"CMD {json.dumps(['python', str(server), str(readyz_status)])}\n",
        encoding="utf-8",
    )
    return dockerfile


def test_the_image_environment_is_mapped_to_this_machine() -> None:
    image_env = {
        "PATH": "/opt/venv/bin:/usr/bin",
        "PYTHONUNBUFFERED": "1",
        "COMPACT_WORKDIR": "/workspace",
        "COMPACT_DATA_DIR": "/data",
        "COMPACT_HOST": "0.0.0.0",
        "COMPACT_PORT": "8080",
    }
    assert host_env(image_env, venv="/repo/.venv", workdir="/t/w", data_dir="/t/d", port=5) == {
        "PATH": "/repo/.venv/bin:/usr/bin",
        "PYTHONUNBUFFERED": "1",
        "COMPACT_WORKDIR": "/t/w",
        "COMPACT_DATA_DIR": "/t/d",
        "COMPACT_HOST": "127.0.0.1",
        "COMPACT_PORT": "5",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "HTTP_PROXY": CLOSED_PORT_PROXY,
        "HTTPS_PROXY": CLOSED_PORT_PROXY,
        "ALL_PROXY": CLOSED_PORT_PROXY,
        "http_proxy": CLOSED_PORT_PROXY,
        "https_proxy": CLOSED_PORT_PROXY,
    }


def test_a_command_that_serves_both_probes_passes(tmp_path: Path) -> None:
    assert sys.prefix != sys.base_prefix  # `python` must resolve to this venv's
    assert run(image(tmp_path, readyz_status=200), timeout=20) == []


def test_a_command_that_is_not_ready_fails(tmp_path: Path) -> None:
    assert run(image(tmp_path, readyz_status=503), timeout=20) == [
        "GET /readyz answered 503: {'path': '/readyz'}"
    ]


def test_a_command_that_exits_at_once_fails(tmp_path: Path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        'FROM python:3.11-slim\nENV PATH=/opt/venv/bin:$PATH\nCMD ["python", "-c", "exit(3)"]\n',
        encoding="utf-8",
    )
    assert run(dockerfile, timeout=20) == ["the start command exited with 3"]
