"""The layout a newcomer reads from the folder listing, held to its targets and to
docs/development.md: few modules loose in `app/` and `app/core`, and every package and
module of them named on the page (issue: "a layout that shows the architecture")."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
CORE = APP / "core"
PAGE = ROOT / "docs" / "development.md"


def _modules(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.py") if p.name != "__init__.py")


def _packages(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if (p / "__init__.py").is_file())


def _layout_block() -> str:
    section = PAGE.read_text(encoding="utf-8").split("## Layout\n", 1)[1]
    return section.split("```\n", 2)[1]


def test_few_modules_lie_loose_in_app_and_in_core() -> None:
    assert len(_modules(APP)) <= 5, _modules(APP)
    assert len(_modules(CORE)) <= 15, _modules(CORE)


def test_the_page_names_every_package_and_module_of_app_and_core() -> None:
    block = _layout_block()
    words = set(re.findall(r"[\w.]+", block))
    names = {*_packages(APP), *_modules(APP), *_packages(CORE), *_modules(CORE)}
    for package in _packages(CORE):
        names |= set(_modules(CORE / package))
    missing = sorted(n for n in names if n not in words and f"{n}.py" not in words)
    assert missing == []


def test_the_page_names_no_module_or_package_that_is_gone() -> None:
    block = _layout_block()
    modules = {m for m in re.findall(r"(\w+)\.py\b", block) if not m.startswith("test_")}
    folders = set(re.findall(r"^ *(\w+)/", block, re.M))
    present = {p.stem for p in APP.rglob("*.py")} | {p.name for p in APP.rglob("*") if p.is_dir()}
    outside_app = {"app", "bench", "deploy", "examples", "scripts", "tests"}
    assert sorted((modules | folders) - present - outside_app) == []
