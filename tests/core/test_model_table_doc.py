from __future__ import annotations

import re
from pathlib import Path

from app.core.model_table import MODELS

DOC = Path(__file__).resolve().parents[2] / "docs" / "models.md"
ROW = re.compile(
    r"^\| `([^`]+)` \| ([\d,]+) \| ([\d,]+) \| ([\d,]+|—) \| ([\d,]+|—) \| `(\w+)` ",
    re.MULTILINE,
)


def _number(text: str) -> int | None:
    return None if text == "—" else int(text.replace(",", ""))


def test_the_models_page_lists_every_entry_with_its_limits_and_tokenizer() -> None:
    listed = {
        name: (_number(window), _number(limit), _number(output), _number(long), tokenizer)
        for name, window, limit, output, long, tokenizer in ROW.findall(DOC.read_text())
    }
    assert listed == {
        n: (
            s.context_window,
            s.input_limit or s.context_window,
            s.output_limit,
            s.context_1m_window,
            s.tokenizer,
        )
        for n, s in MODELS.items()
    }
