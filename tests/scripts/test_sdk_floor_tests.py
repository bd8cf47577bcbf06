"""scripts/sdk_floor_tests.py: which versions it installs and which tests it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts.sdk_floor_tests import ROOT, floors, sdk_test_files

DEV = """
[project]
name = "x"
[project.optional-dependencies]
dev = ["pytest>=8", "anthropic>=2.14,<3", "openai>=3.57,<4"]
"""


def test_the_floors_are_the_lower_bounds_of_the_dev_extra() -> None:
    assert floors(DEV) == {"anthropic": "2.14", "openai": "3.57"}


def test_an_sdk_without_a_lower_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="no lower bound"):
        floors(DEV.replace("anthropic>=2.14,<3", "anthropic<3"))
    with pytest.raises(ValueError, match="does not name"):
        floors(DEV.replace('"openai>=3.57,<4"', '"respx"'))


def test_the_repository_s_own_floors_are_read() -> None:
    found = floors((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert set(found) == {"anthropic", "openai"}


def test_only_test_files_that_import_an_sdk_are_run() -> None:
    tests = ROOT / "tests"
    files = sdk_test_files(tests)
    assert "tests/fakes/test_provider_server.py" in files
    assert "tests/test_readme.py" not in files
    assert all(Path(f).name.startswith("test_") for f in files)
