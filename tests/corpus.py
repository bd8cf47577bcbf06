"""The real agent transcripts the tests run over, shipped in `tests/data/corpus/`.

Eleven SWE-agent sessions, each in both shapes (`*.anthropic.json`, `*.openai.json`); where
they come from and their licence are in `tests/data/corpus/README.md`. Nothing here reads
outside the repository, so a fresh clone runs every corpus test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).resolve().parent / "data" / "corpus"
FILES = sorted(CORPUS_DIR.glob("*.json"))
ANTHROPIC_FILES = [f for f in FILES if f.name.endswith(".anthropic.json")]
OPENAI_FILES = [f for f in FILES if f.name.endswith(".openai.json")]


def load(path: Path) -> list[dict[str, Any]]:
    """The `messages` of one corpus file."""
    messages: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["messages"]
    return messages
