"""The fresh-clone CI step's reading of the README and of pytest's output."""

from __future__ import annotations

from pathlib import Path

from scripts.fresh_clone_tests import allowed_skips, problems, readme_test_command

README = Path(__file__).resolve().parents[2] / "README.md"
GREEN = "==== 1370 passed, 16 deselected in 50.67s ====\n"


def test_the_readme_gives_one_test_command_and_names_its_allowed_skips() -> None:
    text = README.read_text(encoding="utf-8")
    assert readme_test_command(text) == (
        "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e '.[dev]' "
        "&& .venv/bin/python -m pytest"
    )
    assert allowed_skips(text) == {
        "openat2 is refused on this machine",
        "creating device nodes needs CAP_MKNOD",
    }


def test_a_green_run_with_an_allowed_skip_passes() -> None:
    output = "SKIPPED [1] tests/a.py:27: openat2 is refused on this machine\n" + GREEN
    assert problems(output, 0, {"openat2 is refused on this machine"}) == []


def test_an_unlisted_skip_fails() -> None:
    output = "SKIPPED [3] tests/b.py:12: no corpus at ../shared/corpus\n" + GREEN
    assert problems(output, 0, {"openat2 is refused on this machine"}) == [
        "skipped for a reason the README does not allow: no corpus at ../shared/corpus"
    ]


def test_a_failure_a_bad_exit_or_no_closing_line_fails() -> None:
    assert problems("=== 1 failed, 660 passed, 15 skipped in 9.1s ===\n", 1, set()) == [
        "the test command exited 1",
        "not green: 1 failed, 660 passed, 15 skipped",
    ]
    assert problems("ERROR: pip could not install\n", 1, set()) == [
        "the test command exited 1",
        "pytest printed no closing line (passed/failed counts)",
    ]
    assert problems("5 passed, 1 error in 2.0s\n", 0, set()) == ["not green: 5 passed, 1 error"]
