"""No module in `app/` over 400 non-blank lines: one job per module, read in one sitting.

One module is still over it, held to its size today until it is split (it was being
changed in parallel when the others were split): it may shrink, never grow.
"""

from __future__ import annotations

from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app"
LIMIT = 400
NOT_YET_SPLIT = {"settings.py": 465}


def non_blank_lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def test_no_module_is_over_the_limit() -> None:
    sizes = {str(p.relative_to(APP)): non_blank_lines(p) for p in sorted(APP.rglob("*.py"))}
    over = {
        name: size
        for name, size in sizes.items()
        if size > max(LIMIT, NOT_YET_SPLIT.get(name, LIMIT))
    }
    assert over == {}


def test_the_modules_not_yet_split_are_still_over_the_limit() -> None:
    for name in NOT_YET_SPLIT:
        assert non_blank_lines(APP / name) > LIMIT, f"{name} is split: drop it from the list"
