"""Prose that a reader of this repository can follow: no citations of documents it lacks.

Docstrings, comments, field descriptions (and so openapi.yaml and the generated TypeScript
types) and docs state each rule itself. A citation such as "seed 003 §7.3", "F-005",
"UC-006", "DESIGN §2" or "issue 7" points at a design source or tracker that is not in
the repository, so it says nothing to the reader and rots when the source changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = ("app", "bench", "scripts", "examples", "clients", "docs")
FILES = ("README.md", "openapi.yaml")
SUFFIXES = {".py", ".md", ".ts", ".yaml", ".yml", ".toml", ".json"}
SKIPPED_DIRS = {"node_modules", "__pycache__", ".venv"}
SKIPPED_NAMES = {"package-lock.json"}

# Each pattern with what it catches. `seed000` (no space) is a preset name of the API
# (`read_tools`), not a citation, so "seed" only counts when a space precedes the number.
CITATIONS = {
    "a design seed (seed 00x)": re.compile(r"\b[Ss]eed \d{3}\b"),
    "a section sign (§)": re.compile("§"),
    "the design brief (DESIGN)": re.compile(r"\bDESIGN\b"),
    "a feature, use-case or business-rule id (F-00x, UC-00x, BR-0x)": re.compile(
        r"\b(?:F|UC|BR)-\d{2,3}\b"
    ),
    "an issue number": re.compile(r"\b[Ii]ssues? #?\d+\b"),
    "field notes outside the repository (FIELD-NOTES)": re.compile(r"\bFIELD-NOTES\b"),
}
# A seed's item ids ("A5's template", "C1's fields", "A4/A5"), in the server's own code only:
# elsewhere such a token may be an ordinary name.
ITEM_ID = re.compile(r"\b[A-E][1-9]\b")


def prose_files() -> Iterator[Path]:
    for name in FILES:
        yield ROOT / name
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*")):
            relative = path.relative_to(ROOT)
            if SKIPPED_DIRS.intersection(relative.parts) or path.name in SKIPPED_NAMES:
                continue
            if path.is_file() and path.suffix in SUFFIXES:
                yield path


def citations(path: Path) -> list[str]:
    """`path:line: what — the line` for every citation in the file."""
    relative = path.relative_to(ROOT).as_posix()
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        kinds = [kind for kind, pattern in CITATIONS.items() if pattern.search(line)]
        if relative.startswith("app/") and path.suffix == ".py" and ITEM_ID.search(line):
            kinds.append("a design seed's item id (A1, C5, ...)")
        found.extend(f"{relative}:{number}: {kind} — {line.strip()}" for kind in kinds)
    return found


@pytest.mark.slow
def test_no_prose_cites_a_document_the_repository_does_not_have() -> None:
    found = [hit for path in prose_files() for hit in citations(path)]
    assert found == [], "say the rule itself instead of citing its source:\n" + "\n".join(found)


def test_the_scan_covers_the_code_and_the_docs() -> None:
    scanned = {path.relative_to(ROOT).as_posix() for path in prose_files()}
    assert {"app/core/options/compact.py", "docs/design.md", "README.md", "openapi.yaml"} <= scanned
    assert not any("node_modules" in name for name in scanned)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("(seed 003 §7.3)", "a design seed (seed 00x)"),
        ('"""Seed 000 F-009."""', "a design seed (seed 00x)"),
        ("DESIGN §3", "the design brief (DESIGN)"),
        ("(F-005)", "a feature, use-case or business-rule id (F-00x, UC-00x, BR-0x)"),
        ("(UC-006)", "a feature, use-case or business-rule id (F-00x, UC-00x, BR-0x)"),
        ("seed 002 BR-01", "a feature, use-case or business-rule id (F-00x, UC-00x, BR-0x)"),
        ("(issue 7)", "an issue number"),
        ("Status (issue #6)", "an issue number"),
    ],
)
def test_each_kind_of_citation_is_caught(line: str, kind: str) -> None:
    assert CITATIONS[kind].search(line)


@pytest.mark.parametrize(
    "line",
    [
        "presets: seed000 (read_file.path), claude_code (Read.file_path)",
        "SEED_000_READ_TOOLS = (FileReadTool('read_file', 'path'),)",
        "see docs/design.md, the section on jobs",
        "a seeded random delay",
    ],
)
def test_names_that_only_look_like_citations_pass(line: str) -> None:
    assert not any(pattern.search(line) for pattern in CITATIONS.values())


def test_a_seed_item_id_is_caught_in_the_server_code() -> None:
    assert ITEM_ID.search("in seed 004 A5's archive template")
    assert ITEM_ID.search("C1's compressed form")
    assert not ITEM_ID.search("B12 vitamins, section A, 2 CPUs, A10")
