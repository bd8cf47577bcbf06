"""The shipped corpus is all there: an empty glob would silently turn every corpus test into
an empty parameter set."""

from __future__ import annotations

import json

from tests.corpus import ANTHROPIC_FILES, CORPUS_DIR, FILES, OPENAI_FILES


def test_the_corpus_ships_eleven_sessions_in_both_shapes() -> None:
    assert len(ANTHROPIC_FILES) == 11
    assert [f.name.replace(".openai.", ".anthropic.") for f in OPENAI_FILES] == [
        f.name for f in ANTHROPIC_FILES
    ]
    assert len(FILES) == 22


def test_every_file_names_its_source_and_shape() -> None:
    for path in FILES:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["source"].startswith("SWE-agent/SWE-agent@"), path.name
        assert path.name.endswith(f".{data['format']}.json")


def test_the_licence_and_attribution_ship_with_it() -> None:
    readme = (CORPUS_DIR / "README.md").read_text(encoding="utf-8")
    assert "github.com/SWE-agent/SWE-agent" in readme
    assert "Permission is hereby granted, free of charge" in (CORPUS_DIR / "LICENSE").read_text(
        encoding="utf-8"
    )
