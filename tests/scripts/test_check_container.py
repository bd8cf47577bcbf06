from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scripts.check_container import (
    compose_build_problems,
    compose_port_problems,
    compose_problems,
    compose_schema_problems,
    dockerfile_problems,
    expand,
    healthcheck_command,
    image_command,
    interpolate,
    parse_dockerfile,
    stage_env,
)

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
FROM python:3.11-slim AS build
RUN python -m venv /opt/venv && /opt/venv/bin/pip install . \\
 && /opt/venv/bin/python -c "from app.adapters.tokenizer import *; TiktokenTokenizer()"
FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH TIKTOKEN_CACHE_DIR="" \\
    COMPACT_WORKDIR=/workspace COMPACT_DATA_DIR=/data
COPY --from=build /opt/venv /opt/venv
USER 10001
VOLUME ["/data"]
HEALTHCHECK CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz')"]
CMD ["python", "-m", "app", "serve"]
"""


def problems_of(text: str) -> list[str]:
    return dockerfile_problems(parse_dockerfile(text))


def test_the_repository_dockerfile_keeps_every_rule() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert problems_of(text) == []


def test_a_dockerfile_that_keeps_the_rules_has_no_problems() -> None:
    assert problems_of(GOOD) == []


def test_a_single_stage_image_is_not_multi_stage() -> None:
    one_stage = GOOD.replace("COPY --from=build /opt/venv /opt/venv\n", "")
    final = one_stage.split("FROM python:3.11-slim\n")[1]
    assert problems_of("FROM python:3.11-slim\n" + final) == [
        "not multi-stage: build in one stage, copy the result into the final one",
        "the final stage copies nothing from a build stage (COPY --from=...)",
        "no build-stage RUN loads the tokenizer (TiktokenTokenizer()): "
        "the encoding must be checked at build time",
    ]


def test_a_full_python_base_is_not_slim() -> None:
    assert problems_of(GOOD.replace("FROM python:3.11-slim\n", "FROM python:3.11\n")) == [
        "base image 'python:3.11' is not a slim Python image"
    ]


@pytest.mark.parametrize("user", ["", "USER root\n", "USER 0:0\n"])
def test_an_image_without_a_non_root_user_runs_as_root(user: str) -> None:
    assert problems_of(GOOD.replace("USER 10001\n", user)) == [
        "the final stage runs as root: add a non-root USER"
    ]


def test_a_healthcheck_must_call_healthz_on_the_loopback_address() -> None:
    remote = GOOD.replace("http://127.0.0.1:8080/healthz", "http://example.com/healthz")
    elsewhere = GOOD.replace("8080/healthz", "8080/readyz")
    missing = "".join(line for line in GOOD.splitlines(True) if "HEALTHCHECK" not in line)
    assert problems_of(remote) == [
        "the HEALTHCHECK does not call /healthz on the loopback address",
        "the HEALTHCHECK fetches from the network: ['python', '-c', "
        "\"import urllib.request; urllib.request.urlopen('http://example.com/healthz')\"]",
    ]
    assert problems_of(elsewhere) == [
        "the HEALTHCHECK does not call /healthz on the loopback address"
    ]
    assert problems_of(missing) == ["no HEALTHCHECK CMD in exec form in the final stage"]


def test_data_must_be_a_volume_and_the_directories_the_image_defaults() -> None:
    text = GOOD.replace('VOLUME ["/data"]\n', "").replace("COMPACT_DATA_DIR=/data", "")
    text = text.replace("COMPACT_WORKDIR=/workspace", "COMPACT_WORKDIR=/src")
    assert problems_of(text) == [
        "/data is not a VOLUME",
        "ENV COMPACT_DATA_DIR is not /data",
        "ENV COMPACT_WORKDIR is not /workspace",
    ]


def test_a_tiktoken_cache_would_write_to_the_root_file_system() -> None:
    assert problems_of(GOOD.replace(' TIKTOKEN_CACHE_DIR=""', "")) == [
        'ENV TIKTOKEN_CACHE_DIR is not "": tiktoken would write a cache'
    ]


def test_a_start_command_that_installs_or_downloads_is_refused() -> None:
    installs = GOOD.replace(
        'CMD ["python", "-m", "app", "serve"]',
        'CMD ["sh", "-c", "pip install context-compact && python -m app serve"]',
    )
    downloads = GOOD.replace(
        'CMD ["python", "-m", "app", "serve"]',
        'ENTRYPOINT ["python", "fetch.py", "https://example.com/cl100k_base.tiktoken"]',
    )
    assert problems_of(installs) == [
        "the start command fetches from the network: "
        "['sh', '-c', 'pip install context-compact && python -m app serve']"
    ]
    assert problems_of(downloads) == [
        "the start command fetches from the network: "
        "['python', 'fetch.py', 'https://example.com/cl100k_base.tiktoken']"
    ]


def test_a_shell_form_command_is_refused() -> None:
    text = GOOD.replace('CMD ["python", "-m", "app", "serve"]', "CMD python -m app serve")
    assert problems_of(text) == ["line 11: CMD must use the exec (JSON) form"]


def test_the_dependencies_are_installed_before_the_code_is_copied() -> None:
    layered = GOOD.replace(
        "FROM python:3.11-slim AS build\n",
        "FROM python:3.11-slim AS build\nCOPY pyproject.toml ./\n"
        "RUN pip install -r requirements.txt\nCOPY app ./app\n",
    )
    assert problems_of(layered) == []
    code_first = GOOD.replace(
        "FROM python:3.11-slim AS build\n", "FROM python:3.11-slim AS build\nCOPY app ./app\n"
    )
    assert problems_of(code_first) == [
        "no dependency layer: install the dependencies (from pyproject.toml) in a RUN "
        "before copying the code"
    ]


def test_loading_the_tokenizer_only_at_run_time_is_refused() -> None:
    text = GOOD.replace(
        ' \\\n && /opt/venv/bin/python -c "from app.adapters.tokenizer import *; '
        'TiktokenTokenizer()"',
        "",
    )
    assert problems_of(text) == [
        "no build-stage RUN loads the tokenizer (TiktokenTokenizer()): "
        "the encoding must be checked at build time"
    ]


def test_the_start_command_is_entrypoint_then_cmd() -> None:
    stage = parse_dockerfile('FROM python:3.11-slim\nENTRYPOINT ["python"]\nCMD ["-m", "app"]\n')
    assert image_command(stage[-1]) == ["python", "-m", "app"]
    assert healthcheck_command(parse_dockerfile(GOOD)[-1]) == [
        "python",
        "-c",
        "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz')",
    ]


def test_env_values_lose_their_quotes_and_substitute_earlier_variables() -> None:
    assert expand("/opt/venv/bin:$PATH", {"PATH": "/usr/bin"}) == "/opt/venv/bin:/usr/bin"
    assert expand("${HOME}/x", {"HOME": "/h"}) == "/h/x"
    assert expand('""', {}) == ""
    assert expand("'$PATH' \"a b\" c\\ d", {"PATH": "/usr/bin"}) == "$PATH a b c d"
    stage = parse_dockerfile(GOOD)[-1]
    assert stage_env(stage, {"PATH": "/usr/bin"}) == {
        "PATH": "/opt/venv/bin:/usr/bin",
        "TIKTOKEN_CACHE_DIR": "",
        "COMPACT_WORKDIR": "/workspace",
        "COMPACT_DATA_DIR": "/data",
    }


def test_env_substitutions_we_do_not_implement_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported substitution"):
        expand("${PATH:-/bin}", {})


COMPOSE = """\
services:
  compact:
    build: .
    env_file: [.env]
    volumes:
      - ${AGENT_PROJECT_DIR:-./examples/workdir}:/workspace:ro
      - compact-data:/data
    healthcheck:
      test: ["CMD", "python", "-c", "urlopen('http://127.0.0.1:8080/healthz')"]
volumes:
  compact-data:
"""


def compose_problems_of(text: str) -> list[str]:
    return compose_problems(interpolate(yaml.safe_load(text), {}))


def test_the_repository_compose_file_matches_the_schema_and_the_rules() -> None:
    path = ROOT / "docker-compose.yml"
    assert compose_schema_problems(path) == []
    assert compose_problems_of(path.read_text(encoding="utf-8")) == []
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert compose_port_problems(raw) == []
    assert compose_build_problems(interpolate(raw, {})) == []


REPLICAS = """services:
  compact:
    build: .
    image: cc:latest
    environment: {COMPACT_PORT: "8080"}
    ports: ["127.0.0.1:${COMPACT_PORT:-8080}:8080"]
  replica:
    image: cc:latest
    environment: [COMPACT_PORT=8080]
    ports: ["127.0.0.1:8081:8080"]
  other:
    build: ./other
    image: other:latest
    ports: ["9000:9000"]
"""


PROXIED = REPLICAS.replace(
    'environment: {COMPACT_PORT: "8080"}\n    ports: ["127.0.0.1:${COMPACT_PORT:-8080}:8080"]',
    'environment: {COMPACT_PORT: "8080", COMPACT_PROXY_PORT: "8787"}\n'
    '    ports: ["127.0.0.1:${COMPACT_PORT:-8080}:8080", '
    '"127.0.0.1:${COMPACT_PROXY_HOST_PORT:-8787}:8787"]',
)


def test_the_proxy_s_port_may_be_published_where_its_setting_pins_it() -> None:
    assert "8787" in PROXIED
    assert compose_port_problems(yaml.safe_load(PROXIED)) == []
    fixed = PROXIED.replace("${COMPACT_PROXY_HOST_PORT:-8787}:8787", "8787:8787")
    assert compose_port_problems(yaml.safe_load(fixed)) == [
        "compact: the proxy's host port 8787 does not follow COMPACT_PROXY_HOST_PORT"
    ]
    unpinned = PROXIED.replace(', COMPACT_PROXY_PORT: "8787"', "")
    assert compose_port_problems(yaml.safe_load(unpinned)) == [
        "compact: publishes container port 8787, not 8080",
        "compact: the host port 18787 does not follow COMPACT_PORT "
        "(127.0.0.1:${COMPACT_PORT:-8080}:8080)",
    ]


def test_compact_port_moves_the_host_port_and_never_the_containers() -> None:
    assert compose_port_problems(yaml.safe_load(REPLICAS)) == []
    fixed = REPLICAS.replace("${COMPACT_PORT:-8080}:8080", "8080:8080")
    assert compose_port_problems(yaml.safe_load(fixed)) == [
        "compact: the host port 8080 does not follow COMPACT_PORT "
        "(127.0.0.1:${COMPACT_PORT:-8080}:8080)"
    ]
    unpinned = REPLICAS.replace("    environment: [COMPACT_PORT=8080]\n", "")
    assert compose_port_problems(yaml.safe_load(unpinned)) == [
        "replica: COMPACT_PORT is not pinned to 8080 in environment: one in .env would move "
        "the container's port away from its mapping"
    ]
    moved = REPLICAS.replace('"127.0.0.1:8081:8080"', '"127.0.0.1:8081:9090"')
    assert compose_port_problems(yaml.safe_load(moved)) == [
        "replica: publishes container port 9090, not 8080"
    ]


def test_the_image_is_built_by_one_service() -> None:
    assert compose_build_problems(yaml.safe_load(REPLICAS)) == []
    twice = REPLICAS.replace("  replica:\n", "  replica:\n    build: .\n")
    assert compose_build_problems(yaml.safe_load(twice)) == [
        "the image is built by 2 services (compact, replica): build it once"
    ]


def test_a_compose_file_that_keeps_the_rules_has_no_problems() -> None:
    assert compose_problems_of(COMPOSE) == []


def test_a_writable_work_directory_is_refused() -> None:
    assert compose_problems_of(COMPOSE.replace(":/workspace:ro", ":/workspace")) == [
        "the work directory at /workspace is not mounted read-only (:ro)"
    ]


def test_the_long_volume_syntax_counts_read_only() -> None:
    text = COMPOSE.replace(
        "      - ${AGENT_PROJECT_DIR:-./examples/workdir}:/workspace:ro\n",
        "      - {type: bind, source: ., target: /workspace, read_only: true}\n",
    )
    assert compose_problems_of(text) == []


def test_the_data_directory_must_be_a_declared_named_volume() -> None:
    assert compose_problems_of(COMPOSE.replace("compact-data:/data", "./data:/data")) == [
        "/data is not a named volume declared under volumes:"
    ]
    assert compose_problems_of(COMPOSE.replace("      - compact-data:/data\n", "")) == [
        "expected two volumes (/workspace, /data), got 1",
        "no volume at /data",
    ]


def test_env_file_and_healthcheck_are_required() -> None:
    text = COMPOSE.replace("    env_file: [.env]\n", "").replace("127.0.0.1:8080/healthz", "x")
    assert compose_problems_of(text) == [
        "no env_file: LLM settings belong in .env (see .env.example)",
        "the healthcheck does not call /healthz on the loopback address",
    ]


def test_directories_in_the_environment_must_match_the_mounts() -> None:
    environment = "    environment: [COMPACT_DATA_DIR=/srv]\n"
    text = COMPOSE.replace("    build: .\n", "    build: .\n" + environment)
    assert compose_problems_of(text) == ["COMPACT_DATA_DIR is '/srv', not the mount point /data"]


def test_a_compose_file_outside_the_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "docker-compose.yml"
    path.write_text("services:\n  compact:\n    volumes: 5\n", encoding="utf-8")
    [problem] = compose_schema_problems(path)
    assert problem.startswith("docker-compose.yml does not match the Compose schema:\n")
    assert "$.services.compact.volumes: 5 is not of type 'array'" in problem


def test_compose_variables_take_their_defaults_or_the_environment() -> None:
    document = {"a": ["${X:-one}", "${Y-two}", "${Z}"], "b": {"c": "${X:-one}/d"}}
    assert interpolate(document, {}) == {"a": ["one", "two", ""], "b": {"c": "one/d"}}
    assert interpolate(document, {"X": "x", "Z": "z"}) == {
        "a": ["x", "two", "z"],
        "b": {"c": "x/d"},
    }
