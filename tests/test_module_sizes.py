"""No module in `app/` over 400 non-blank lines: one job per module, read in one sitting.

None is left out: `app/settings/model.py`, one declaration per setting, is split into a chain of
classes (its first fields in a parent class) and a module of helpers, the configuration
table's rows kept in order (tests/scripts/test_config_table.py).
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
