"""Run the README's test command in a fresh clone, with nothing beside it.

The repository's own checkout may have things around it that a newcomer's does not (a
`../shared` directory, an old `.venv`, files left by earlier runs). This clones `HEAD`
into a new temporary directory — the clone is the only thing in it — runs the test command
exactly as the README's first code block gives it (the line with `-m pytest`), and fails
when the command fails, when pytest's closing line is missing, or when a test was skipped
for a reason the README does not list under "Allowed skips".

Uncommitted changes are not in the clone: commit first.

Usage: python -m scripts.fresh_clone_tests [--keep]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

_FIRST_BLOCK = re.compile(r"```(?:bash|sh)\n(.*?)```", re.DOTALL)
_ALLOWED = re.compile(r"Allowed skips[^:]*:(.*?)(?:\n\n|\Z)", re.DOTALL)
_SKIPPED = re.compile(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", re.MULTILINE)
_CLOSING = re.compile(r"^=*\s*(\d+ (?:passed|failed).*?) in [\d.]+s", re.MULTILINE)


def readme_test_command(readme: str) -> str:
    """The line of the README's first shell block that runs pytest."""
    block = _FIRST_BLOCK.search(readme)
    if block is None:
        raise ValueError("README.md has no ```bash block")
    lines = [line for line in block.group(1).splitlines() if "-m pytest" in line]
    if len(lines) != 1:
        raise ValueError("README.md's first ```bash block must have one line with `-m pytest`")
    return lines[0].strip()


def allowed_skips(readme: str) -> set[str]:
    """The skip reasons the README names, each in backticks after "Allowed skips ...:"."""
    found = _ALLOWED.search(readme)
    return set(re.findall(r"`([^`]+)`", found.group(1))) if found else set()


def problems(output: str, returncode: int, allowed: Iterable[str]) -> list[str]:
    """Why the run does not count as green: empty when it does."""
    out: list[str] = []
    if returncode != 0:
        out.append(f"the test command exited {returncode}")
    closing = _CLOSING.findall(output)
    if not closing:
        out.append("pytest printed no closing line (passed/failed counts)")
    elif re.search(r"\d+ (failed|errors?)\b", closing[-1]):
        out.append(f"not green: {closing[-1]}")
    unexpected = sorted(set(_SKIPPED.findall(output)) - set(allowed))
    out.extend(f"skipped for a reason the README does not allow: {r}" for r in unexpected)
    return out


def run(keep: bool) -> int:
    readme = README.read_text(encoding="utf-8")
    command = readme_test_command(readme)
    allowed = allowed_skips(readme)
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="context-compact-fresh-"))
    clone = tmp / "context-compact"
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        subprocess.run(
            ["git", "-C", str(clone), "checkout", "--quiet", "--detach", head], check=True
        )
        print(f"fresh clone of {head[:12]} in {clone} (nothing beside it)", flush=True)
        print(f"$ {command}", flush=True)
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=clone,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            sys.stdout.write(line)
            lines.append(line)
        returncode = process.wait()
        found = problems("".join(lines), returncode, allowed)
        for problem in found:
            print(f"fresh clone: {problem}", file=sys.stderr)
        return 1 if found else 0
    finally:
        if keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.fresh_clone_tests", description=__doc__
    )
    parser.add_argument("--keep", action="store_true", help="leave the clone for a look")
    args = parser.parse_args(argv)
    return run(args.keep)


if __name__ == "__main__":
    sys.exit(main())
