from __future__ import annotations

from app.core.recall.terms import (
    MAX_QUERY_TERMS,
    Term,
    WordStat,
    parse_query,
    storable,
    word_stats,
)


def test_word_offsets_are_those_of_the_original_text() -> None:
    text = "İİİ Needle ß needle"
    stats = word_stats(text)
    assert stats["needle"] == WordStat(2, text.index("Needle"))
    assert stats["iii"] == WordStat(1, 0)
    assert stats["ss"] == WordStat(1, text.index("ß"))


def test_a_term_needs_each_of_its_words() -> None:
    query = parse_query("Open src/TZ.py then src/tz.py, İstanbul")
    assert query.terms == (
        Term("open", ("open",)),
        Term("src/tz.py", ("src", "tz", "py")),
        Term("then", ("then",)),
        Term("i̇stanbul", ("istanbul",)),
    )
    assert query.words == ("open", "src", "tz", "py", "then", "istanbul")
    assert query.dropped == ()
    assert parse_query("  ... -- ").terms == ()


def test_terms_past_the_cap_are_dropped_and_named() -> None:
    query = parse_query(" ".join(f"t{i}" for i in range(MAX_QUERY_TERMS + 3)) + " t0 T1")
    assert len(query.terms) == MAX_QUERY_TERMS
    assert query.terms[-1].text == f"t{MAX_QUERY_TERMS - 1}"
    assert query.dropped == tuple(f"t{i}" for i in range(MAX_QUERY_TERMS, MAX_QUERY_TERMS + 3))


def test_storable_text_keeps_every_offset() -> None:
    text = "a\x00b\ud800c"
    assert storable(text) == "a\ufffdb\ufffdc"
    assert len(storable(text)) == len(text)
