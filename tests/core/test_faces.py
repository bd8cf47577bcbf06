"""Each family of `app/core` is a package with a face: its `__init__` re-exports exactly the
names the rest of `app/` imports from it, and the rest of `app/` imports them only through
the face (as httpx's `__init__` does, checked the way its `test_exported_members.py` checks
it). Inside a package, modules import each other directly."""

from __future__ import annotations

import ast
import importlib
from collections import defaultdict
from functools import cache
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
CORE = APP / "core"
PACKAGES = sorted(p.name for p in CORE.iterdir() if (p / "__init__.py").is_file())


@cache  # parsed once for the tests below
def _imports_from_packages() -> tuple[dict[str, set[str]], list[str]]:
    """Per package, the public names imported from it by modules outside it; and every
    import that reaches past a face into a package's module."""
    names: dict[str, set[str]] = defaultdict(set)
    past_face: list[str] = []
    for path in sorted(APP.rglob("*.py")):
        importer = ".".join(path.relative_to(APP.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            parts = node.module.split(".")
            if parts[:2] != ["app", "core"] or len(parts) < 3 or parts[2] not in PACKAGES:
                continue
            package = f"app.core.{parts[2]}"
            if importer == package or importer.startswith(package + "."):
                continue
            if len(parts) > 3:
                past_face.append(f"{importer}: from {node.module} import ...")
            names[parts[2]] |= {a.name for a in node.names}
    return names, past_face


def test_every_family_of_core_is_a_package_with_a_docstring() -> None:
    assert PACKAGES == [
        "history",
        "ledger",
        "options",
        "plans",
        "provider",
        "proxy",
        "recall",
        "restore",
        "sessions",
        "summary",
        "toolkit",
    ]
    for name in PACKAGES:
        assert importlib.import_module(f"app.core.{name}").__doc__, name


def test_the_rest_of_app_imports_a_family_through_its_face_only() -> None:
    _, past_face = _imports_from_packages()
    assert past_face == []


def test_each_face_exports_exactly_what_the_rest_of_app_imports_from_it() -> None:
    used, _ = _imports_from_packages()
    exported = {name: set(importlib.import_module(f"app.core.{name}").__all__) for name in PACKAGES}
    assert exported == {name: used.get(name, set()) for name in PACKAGES}


def test_each_name_a_face_lists_is_there() -> None:
    for name in PACKAGES:
        face = importlib.import_module(f"app.core.{name}")
        assert [n for n in face.__all__ if not hasattr(face, n)] == [], name
