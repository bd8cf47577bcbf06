"""docs/security.md names a test for every case, docs/guarantees.md for some promises: each
one must exist, so neither can claim a test that was renamed or deleted."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SECURITY = ROOT / "docs" / "security.md"
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


@cache
def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def test_every_test_named_in_the_security_tables_exists() -> None:
    references = REFERENCE.findall(SECURITY.read_text(encoding="utf-8"))
    missing = [
        f"{file}::{name}"
        for file, name in references
        if not (ROOT / file).is_file() or name not in defined_tests(ROOT / file)
    ]
    assert len(references) >= 80
    assert missing == []


def test_every_table_row_names_a_test_or_refers_to_the_one_above() -> None:
    rows = [
        line
        for line in SECURITY.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and not line.startswith(("| Case", "| Fault"))
    ]
    assert [row for row in rows if not (REFERENCE.search(row) or "| same |" in row)] == []


def test_every_test_named_in_the_guarantees_exists() -> None:
    references = REFERENCE.findall((ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8"))
    missing = [
        f"{file}::{name}"
        for file, name in references
        if not (ROOT / file).is_file() or name not in defined_tests(ROOT / file)
    ]
    assert len(references) >= 9
    assert missing == []
