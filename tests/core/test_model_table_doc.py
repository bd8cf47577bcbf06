from __future__ import annotations

import re
from pathlib import Path

from app.core.model_table import MODELS

DOC = Path(__file__).resolve().parents[2] / "docs" / "models.md"


def test_the_models_page_lists_every_entry_with_its_window_and_tokenizer() -> None:
    rows = re.findall(r"^\| `([^`]+)` \| ([\d,]+) \| `(\w+)` ", DOC.read_text(), re.MULTILINE)
    listed = {name: (int(window.replace(",", "")), tokenizer) for name, window, tokenizer in rows}
    assert listed == {n: (s.context_window, s.tokenizer) for n, s in MODELS.items()}
