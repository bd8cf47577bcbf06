"""Static checks of the Dockerfile and docker-compose.yml, for a CI without a Docker engine.

The Dockerfile is parsed by BuildKit's own parser (the `dockerfile` package wraps the Go
parser that `docker build` uses) and checked against the rules we promise for the image:
multi-stage, a slim Python base, a non-root `USER`, a `HEALTHCHECK` on `/healthz`, `/data`
as a volume, and nothing fetched at run time (the encoding is loaded in a build-stage
`RUN`; `CMD`, `ENTRYPOINT` and `HEALTHCHECK` call no installer or remote URL), and the
dependencies installed in a layer before the code is copied (a code change reuses it).

docker-compose.yml is validated against the Compose Specification's JSON schema (the copy
that check-jsonschema vendors, `vendor.compose-spec`) and checked for the sidecar's shape:
an env_file, a health check on `/healthz`, the work directory mounted read-only and a
named volume for the data directory; `COMPACT_PORT` moving the host port while every
container keeps listening on the image's port (its healthcheck looks there); and one
service building the image that the others run.

Usage: python -m scripts.check_container [--dockerfile PATH] [--compose PATH]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dockerfile
import yaml

ROOT = Path(__file__).resolve().parent.parent
SIDECAR_SERVICE = "compact"
CONTAINER_PORT = "8080"  # the image's COMPACT_PORT
PORT_PROBE = "18123"  # a COMPACT_PORT a user might set, to see where it goes
PROXY_PORT_PROBE = "18787"  # the same for the proxy's host port
WORKDIR_TARGET = "/workspace"
DATA_TARGET = "/data"
# Commands that fetch from the network: none may run when the container starts.
FETCHERS = frozenset({"pip", "pip3", "uv", "pipx", "curl", "wget", "apt-get", "apt", "apk"})
_LOOPBACK_URL = re.compile(r"https?://(127\.0\.0\.1|localhost)\b")
_REMOTE_URL = re.compile(r"https?://(?!127\.0\.0\.1|localhost)")
_SLIM_PYTHON = re.compile(r"^(docker\.io/(library/)?)?python:[\w.]*-?slim[\w.-]*(@sha256:\w+)?$")


@dataclass(frozen=True)
class Instruction:
    cmd: str  # upper case: FROM, RUN, ENV, ...
    args: tuple[str, ...]
    flags: tuple[str, ...]
    exec_form: bool  # JSON array form (CMD ["python", ...])
    line: int


@dataclass(frozen=True)
class Stage:
    base: str
    name: str | None
    instructions: tuple[Instruction, ...]

    def all(self, cmd: str) -> list[Instruction]:
        return [i for i in self.instructions if i.cmd == cmd]

    def last(self, cmd: str) -> Instruction | None:
        found = self.all(cmd)
        return found[-1] if found else None


def parse_dockerfile(text: str) -> list[Stage]:
    """The stages of a Dockerfile, as BuildKit's parser reads it."""
    stages: list[Stage] = []
    base, name, body = "", None, list[Instruction]()
    for command in dockerfile.parse_string(text):
        instruction = Instruction(
            cmd=command.cmd.upper(),
            args=tuple(command.value),
            flags=tuple(command.flags),
            exec_form=command.json,
            line=command.start_line,
        )
        if instruction.cmd == "FROM":
            if base:
                stages.append(Stage(base, name, tuple(body)))
            args = instruction.args
            base = args[0]
            name = args[2] if len(args) == 3 and args[1].upper() == "AS" else None
            body = []
        elif base:
            body.append(instruction)
    if base:
        stages.append(Stage(base, name, tuple(body)))
    return stages


def expand(word: str, env: Mapping[str, str]) -> str:
    """Quote removal and `$NAME` / `${NAME}` substitution, as Docker does in ENV values
    (enough for our Dockerfile; other `${...}` forms are refused)."""
    out: list[str] = []
    i, quote = 0, ""
    while i < len(word):
        char = word[i]
        if quote == "'" and char != "'":
            out.append(char)
        elif char in "'\"" and quote in ("", char):
            quote = "" if quote else char
        elif char == "\\" and i + 1 < len(word):
            i += 1
            out.append(word[i])
        elif char == "$":
            braced = re.match(r"\$\{([A-Za-z_]\w*)\}", word[i:])
            bare = re.match(r"\$([A-Za-z_]\w*)", word[i:])
            match = braced or bare
            if match is None:
                if word[i:].startswith("${"):
                    raise ValueError(f"unsupported substitution in {word!r}")
                out.append(char)
            else:
                out.append(env.get(match.group(1), ""))
                i += len(match.group(0)) - 1
        else:
            out.append(char)
        i += 1
    if quote:
        raise ValueError(f"unterminated quote in {word!r}")
    return "".join(out)


def stage_env(stage: Stage, inherited: Mapping[str, str]) -> dict[str, str]:
    """The environment a stage's ENV instructions build on top of `inherited` (the base
    image's environment)."""
    env = dict(inherited)
    for instruction in stage.all("ENV"):
        pairs = instruction.args
        for key, raw in zip(pairs[::2], pairs[1::2], strict=True):
            env[key] = expand(raw, env)
    return env


def image_command(stage: Stage) -> list[str]:
    """The argv the container starts with: ENTRYPOINT then CMD, both in exec form."""
    argv: list[str] = []
    for cmd in ("ENTRYPOINT", "CMD"):
        instruction = stage.last(cmd)
        if instruction is not None:
            if not instruction.exec_form:
                raise ValueError(f"line {instruction.line}: {cmd} must use the exec (JSON) form")
            argv.extend(instruction.args)
    if not argv:
        raise ValueError("the final stage has neither ENTRYPOINT nor CMD")
    return argv


def healthcheck_command(stage: Stage) -> list[str] | None:
    """The argv of the final stage's HEALTHCHECK (exec form), or None."""
    instruction = stage.last("HEALTHCHECK")
    if instruction is None or not instruction.args or instruction.args[0].upper() != "CMD":
        return None
    return list(instruction.args[1:]) if instruction.exec_form else None


def _probes_healthz(text: str) -> bool:
    return "/healthz" in text and _LOOPBACK_URL.search(text) is not None


def _fetches(argv: Sequence[str]) -> bool:
    words = {Path(word).name for part in argv for word in part.split()}
    return bool(words & FETCHERS) or any(_REMOTE_URL.search(part) for part in argv)


def dockerfile_problems(stages: Sequence[Stage]) -> list[str]:
    """Every broken image rule, as a sentence; empty when the Dockerfile is fine."""
    if not stages:
        return ["no FROM: not a Dockerfile"]
    problems: list[str] = []
    final, builders = stages[-1], stages[:-1]
    if not builders:
        problems.append("not multi-stage: build in one stage, copy the result into the final one")
    names = {s.name for s in builders} | {str(i) for i in range(len(builders))}
    if not any(
        f.startswith("--from=") and f.removeprefix("--from=") in names
        for copy in final.all("COPY")
        for f in copy.flags
    ):
        problems.append("the final stage copies nothing from a build stage (COPY --from=...)")
    for stage in stages:
        if not _SLIM_PYTHON.match(stage.base):
            problems.append(f"base image {stage.base!r} is not a slim Python image")

    user = final.last("USER")
    if user is None or user.args[0].split(":")[0] in ("root", "0"):
        problems.append("the final stage runs as root: add a non-root USER")

    env = stage_env(final, {})
    health = healthcheck_command(final)
    if health is None:
        problems.append("no HEALTHCHECK CMD in exec form in the final stage")
    elif not _probes_healthz(" ".join(health)):
        problems.append("the HEALTHCHECK does not call /healthz on the loopback address")

    volumes = {v for instruction in final.all("VOLUME") for v in instruction.args}
    if DATA_TARGET not in volumes:
        problems.append(f"{DATA_TARGET} is not a VOLUME")
    if env.get("COMPACT_DATA_DIR") != DATA_TARGET:
        problems.append(f"ENV COMPACT_DATA_DIR is not {DATA_TARGET}")
    if env.get("COMPACT_WORKDIR") != WORKDIR_TARGET:
        problems.append(f"ENV COMPACT_WORKDIR is not {WORKDIR_TARGET}")
    if env.get("TIKTOKEN_CACHE_DIR") != "":
        problems.append('ENV TIKTOKEN_CACHE_DIR is not "": tiktoken would write a cache')

    try:
        start = image_command(final)
    except ValueError as exc:
        problems.append(str(exc))
    else:
        if _fetches(start):
            problems.append(f"the start command fetches from the network: {start}")
    if health is not None and _fetches(health):
        problems.append(f"the HEALTHCHECK fetches from the network: {health}")
    if final.all("ADD"):
        problems.append("ADD in the final stage: use COPY (ADD can fetch URLs)")
    problems += _dependency_layer_problems(builders)
    build_runs = [" ".join(run.args) for stage in builders for run in stage.all("RUN")]
    if not any("TiktokenTokenizer()" in run for run in build_runs):
        problems.append(
            "no build-stage RUN loads the tokenizer (TiktokenTokenizer()): "
            "the encoding must be checked at build time"
        )
    return problems


def _dependency_layer_problems(builders: Sequence[Stage]) -> list[str]:
    """The stage that copies the code must install the dependencies before copying it."""
    for stage in builders:
        steps = list(stage.instructions)
        code = next(
            (n for n, i in enumerate(steps) if i.cmd == "COPY" and "app" in i.args[:-1]), None
        )
        if code is None:
            continue
        installs = [
            n
            for n, i in enumerate(steps[:code])
            if i.cmd == "RUN" and "pip install" in " ".join(i.args)
        ]
        if not installs:
            return [
                "no dependency layer: install the dependencies (from pyproject.toml) in a RUN "
                "before copying the code"
            ]
    return []


_COMPOSE_VARIABLE = re.compile(r"\$\{([A-Za-z_]\w*)(?::?-([^}]*))?\}")


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """Compose's `${NAME}`, `${NAME:-default}` and `${NAME-default}` in every string of a
    compose document (what `docker compose config` does first)."""
    if isinstance(value, str):
        return _COMPOSE_VARIABLE.sub(lambda m: env.get(m.group(1)) or m.group(2) or "", value)
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    return value


def _short_volume(spec: str) -> tuple[str, str, bool]:
    """`source:target[:mode]` → (source, target, read_only)."""
    parts = spec.split(":")
    if len(parts) < 2:
        return "", parts[0], False
    modes = parts[2].split(",") if len(parts) > 2 else []
    return parts[0], parts[1], "ro" in modes


def compose_problems(document: Mapping[str, Any]) -> list[str]:
    """Every broken sidecar rule of a compose file, as a sentence."""
    service = (document.get("services") or {}).get(SIDECAR_SERVICE)
    if not isinstance(service, dict):
        return [f"no service named {SIDECAR_SERVICE!r}"]
    problems: list[str] = []
    if "build" not in service:
        problems.append(f"service {SIDECAR_SERVICE!r} does not build the Dockerfile")
    if not service.get("env_file"):
        problems.append("no env_file: LLM settings belong in .env (see .env.example)")
    test = (service.get("healthcheck") or {}).get("test")
    test_text = " ".join(test) if isinstance(test, list) else str(test or "")
    if not _probes_healthz(test_text):
        problems.append("the healthcheck does not call /healthz on the loopback address")

    mounts: dict[str, tuple[str, bool]] = {}
    for volume in service.get("volumes") or []:
        if isinstance(volume, str):
            source, target, read_only = _short_volume(volume)
        else:
            source, target = volume.get("source", ""), volume.get("target", "")
            read_only = bool(volume.get("read_only"))
        mounts[target] = (source, read_only)
    if len(mounts) != 2:
        expected = f"({WORKDIR_TARGET}, {DATA_TARGET})"
        problems.append(f"expected two volumes {expected}, got {len(mounts)}")
    if WORKDIR_TARGET not in mounts:
        problems.append(f"the work directory is not mounted at {WORKDIR_TARGET}")
    elif not mounts[WORKDIR_TARGET][1]:
        problems.append(f"the work directory at {WORKDIR_TARGET} is not mounted read-only (:ro)")
    if DATA_TARGET not in mounts:
        problems.append(f"no volume at {DATA_TARGET}")
    else:
        source, read_only = mounts[DATA_TARGET]
        if source not in (document.get("volumes") or {}):
            problems.append(f"{DATA_TARGET} is not a named volume declared under volumes:")
        if read_only:
            problems.append(f"{DATA_TARGET} is read-only: archives could not be written")

    environment = service.get("environment") or {}
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) for item in environment if "=" in item)
    for key, expected in (("COMPACT_WORKDIR", WORKDIR_TARGET), ("COMPACT_DATA_DIR", DATA_TARGET)):
        if environment.get(key, expected) != expected:
            problems.append(f"{key} is {environment[key]!r}, not the mount point {expected}")
    return problems


def _environment(service: Mapping[str, Any]) -> dict[str, str]:
    environment = service.get("environment") or {}
    if isinstance(environment, list):
        return dict(item.split("=", 1) for item in environment if "=" in item)
    return {str(k): str(v) for k, v in environment.items()}


def _published(entry: Any) -> tuple[str, str]:
    """(host port, container port) of a `ports` entry."""
    if isinstance(entry, dict):
        return str(entry.get("published", "")), str(entry.get("target", ""))
    parts = str(entry).split(":")
    return (parts[-2] if len(parts) > 1 else ""), parts[-1]


def compose_port_problems(raw: Mapping[str, Any]) -> list[str]:
    """With `COMPACT_PORT` set (in the shell or `.env`), the sidecar's host port follows it
    and every service of the image still listens on the image's port, where its healthcheck
    and the port mapping look: `COMPACT_PORT` is pinned in each one's `environment` (which
    wins over `env_file`). A service that pins `COMPACT_PROXY_PORT` may publish that port
    too, its host port following `COMPACT_PROXY_HOST_PORT`."""
    probes = {"COMPACT_PORT": PORT_PROBE, "COMPACT_PROXY_HOST_PORT": PROXY_PORT_PROBE}
    document = interpolate(raw, probes)
    services = document.get("services") or {}
    image = (services.get(SIDECAR_SERVICE) or {}).get("image")
    problems: list[str] = []
    for name, service in services.items():
        if name != SIDECAR_SERVICE and (image is None or service.get("image") != image):
            continue
        pinned = _environment(service).get("COMPACT_PORT")
        proxy = _environment(service).get("COMPACT_PROXY_PORT")
        if pinned != CONTAINER_PORT:
            problems.append(
                f"{name}: COMPACT_PORT is not pinned to {CONTAINER_PORT} in environment: "
                "one in .env would move the container's port away from its mapping"
            )
        for host, target in map(_published, service.get("ports") or []):
            if target == proxy and proxy not in (None, CONTAINER_PORT):
                if name == SIDECAR_SERVICE and host != PROXY_PORT_PROBE:
                    problems.append(
                        f"{name}: the proxy's host port {host} does not follow "
                        "COMPACT_PROXY_HOST_PORT"
                    )
                continue
            if target != CONTAINER_PORT:
                problems.append(f"{name}: publishes container port {target}, not {CONTAINER_PORT}")
            if name == SIDECAR_SERVICE and host != PORT_PROBE:
                problems.append(
                    f"{name}: the host port {host} does not follow COMPACT_PORT "
                    "(127.0.0.1:${COMPACT_PORT:-8080}:8080)"
                )
    return problems


def compose_build_problems(document: Mapping[str, Any]) -> list[str]:
    """One service builds the image; the others that run it name it without building."""
    services = document.get("services") or {}
    image = (services.get(SIDECAR_SERVICE) or {}).get("image")
    builders = [
        name
        for name, service in services.items()
        if "build" in service and (name == SIDECAR_SERVICE or service.get("image") == image)
    ]
    if len(builders) > 1:
        return [
            f"the image is built by {len(builders)} services ({', '.join(builders)}): build it once"
        ]
    return []


def compose_schema_problems(path: Path) -> list[str]:
    """Validation against the Compose Specification schema, by check-jsonschema."""
    checker = Path(sys.executable).parent / "check-jsonschema"
    result = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.compose-spec", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode == 0:
        return []
    return [f"{path.name} does not match the Compose schema:\n{result.stdout}{result.stderr}"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dockerfile", type=Path, default=ROOT / "Dockerfile")
    parser.add_argument("--compose", type=Path, default=ROOT / "docker-compose.yml")
    args = parser.parse_args(argv)

    problems = [f"Dockerfile: {p}" for p in check_dockerfile(args.dockerfile)]
    problems += compose_schema_problems(args.compose)
    raw = yaml.safe_load(args.compose.read_text(encoding="utf-8"))
    document = interpolate(raw, {})
    found = (
        compose_problems(document) + compose_port_problems(raw) + compose_build_problems(document)
    )
    problems += [f"{args.compose.name}: {p}" for p in found]
    for problem in problems:
        print(problem)
    if not problems:
        print(f"{args.dockerfile.name} and {args.compose.name}: every rule holds")
    return 1 if problems else 0


def check_dockerfile(path: Path) -> list[str]:
    try:
        return dockerfile_problems(parse_dockerfile(path.read_text(encoding="utf-8")))
    except (dockerfile.GoParseError, ValueError) as exc:
        return [str(exc)]


if __name__ == "__main__":
    sys.exit(main())
