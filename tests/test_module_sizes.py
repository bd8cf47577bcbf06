"""No module in `app/` over 400 non-blank lines: one job per module, read in one sitting.

None is left out: `app/settings/model.py` names each setting on a line, each declared in the
module of its subject (`app/settings/storage.py`, ...). (No function in `app/` takes more
than 8 parameters either: ruff's PLR0913, pyproject.toml.)
"""

from __future__ import annotations

from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app"
LIMIT = 400


def non_blank_lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def test_no_module_is_over_the_limit() -> None:
    sizes = {str(p.relative_to(APP)): non_blank_lines(p) for p in sorted(APP.rglob("*.py"))}
    over = {name: size for name, size in sizes.items() if size > LIMIT}
    assert over == {}


def test_the_count_skips_blank_lines_only(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('x = 1\n\n   \n"""doc"""\n# note\n', encoding="utf-8")
    assert non_blank_lines(module) == 3
