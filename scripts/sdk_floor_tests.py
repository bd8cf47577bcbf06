"""Run the tests that drive the providers' SDKs with the oldest versions the project admits.

`constraints.txt` pins the versions the test run installs (the newest at the time of the
pin); pyproject.toml admits a range (`anthropic>=2.14,<3`). A test written against the
pinned SDK alone can break on an older one that a user's install may still pick (2.17
wraps a dropped connection that 2.14 lets through). This installs each SDK at its range's
lower bound beside the development environment, in a directory of its own put first on
the path, and runs every test file that imports one of them.

Usage: python -m scripts.sdk_floor_tests
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
SDKS = ("anthropic", "openai")
_IMPORTS = re.compile(rf"^(?:import|from) ({'|'.join(SDKS)})\b", re.MULTILINE)


def floors(pyproject: str) -> dict[str, str]:
    """Each SDK's lower bound in the dev extra: `name>=X` gives X."""
    dev = tomllib.loads(pyproject)["project"]["optional-dependencies"]["dev"]
    found: dict[str, str] = {}
    for line in dev:
        requirement = Requirement(line)
        if requirement.name in SDKS:
            lower = [s.version for s in requirement.specifier if s.operator == ">="]
            if not lower:
                raise ValueError(f"{line}: no lower bound (>=) to test")
            found[requirement.name] = lower[0]
    missing = set(SDKS) - found.keys()
    if missing:
        raise ValueError(f"pyproject.toml's dev extra does not name {sorted(missing)}")
    return found


def sdk_test_files(tests: Path) -> list[str]:
    """The test files that import an SDK, relative to the repository."""
    return sorted(
        str(path.relative_to(ROOT))
        for path in tests.rglob("*.py")
        if path.name.startswith("test_") and _IMPORTS.search(path.read_text(encoding="utf-8"))
    )


def main() -> int:
    versions = floors((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    files = sdk_test_files(ROOT / "tests")
    with tempfile.TemporaryDirectory(prefix="sdk-floor-") as target:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            + ["--target", target]
            + [f"{name}=={version}" for name, version in sorted(versions.items())],
            check=True,
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([target, str(ROOT)])}
        shown = subprocess.run(
            [
                sys.executable,
                "-c",
                "import anthropic, openai; print(anthropic.__version__, openai.__version__)",
            ],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        if [Version(v) for v in shown] != [Version(versions[name]) for name in SDKS]:
            print(f"the floors were not the SDKs imported: {shown}", file=sys.stderr)
            return 1
        print(f"SDK floors {versions} on {len(files)} test files", flush=True)
        marks = "not fuzz and not browser"  # the slow ones too: most drive the proxy
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", marks, *files],
            cwd=ROOT,
            env=env,
            check=False,
        )
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
