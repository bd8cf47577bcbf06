from __future__ import annotations

from pathlib import Path

import pytest

from app.core.prompt import (
    ARCHIVED_HEADINGS,
    ARCHIVED_RULE,
    ARCHIVED_TEMPLATE,
    ARCHIVED_TITLE,
    build_archived_prompt,
)

SEED_004 = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "004_be2100c33498e983.txt"


@pytest.mark.skipif(not SEED_004.exists(), reason="seed 004 not available")
def test_the_archived_headings_are_seed_004s_byte_for_byte() -> None:
    seed = SEED_004.read_text(encoding="utf-8")
    for heading in (ARCHIVED_TITLE, *ARCHIVED_HEADINGS):
        assert f"\n{heading}\n" in seed


def test_the_archived_prompt_asks_for_the_template_with_the_word_limit_and_focus() -> None:
    prompt = build_archived_prompt("[user]\nhi", 300, "the parser")
    assert prompt == (
        "Summarize the older part of a conversation below for the archive. Fill in exactly "
        "this template, keeping its headings (with their emoji) as they are, and output only "
        f"the filled-in template:\n\n{ARCHIVED_TEMPLATE}\n\n{ARCHIVED_RULE}\n\n"
        "Keep the summary under 300 words.\n\n"
        "Additional instructions from the user for this summary:\nthe parser\n\n"
        "<conversation>\n[user]\nhi\n</conversation>"
    )
    assert all(heading in ARCHIVED_TEMPLATE for heading in ARCHIVED_HEADINGS)
