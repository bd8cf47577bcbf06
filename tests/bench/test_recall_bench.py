"""`bench.recall` on tiny sizes: it builds the session, measures, and prints its table."""

from __future__ import annotations

import re

from app.core.recall.terms import parse_query
from bench.recall import QUERY_CHARS, Corpus, main, messages


def test_the_bench_queries_are_2000_characters_of_about_400_terms() -> None:
    corpus = Corpus(size=2000)
    query = corpus.query()
    assert QUERY_CHARS - 8 <= len(query) <= QUERY_CHARS
    parsed = parse_query(query)
    assert len(parsed.terms) == 64
    assert 250 <= len(parsed.terms) + len(parsed.dropped) <= 450


def test_the_archives_have_the_size_asked() -> None:
    batch = messages(Corpus(size=2000), 10, 64)
    size = sum(len(m["content"]) for m in batch)
    assert 48 * 1024 <= size <= 80 * 1024


def test_a_tiny_run_prints_one_row_per_store() -> None:
    section = main(
        [
            "--store",
            "file",
            "--archives",
            "2",
            "--kb",
            "16",
            "--messages",
            "4",
            "--queries",
            "3",
            "--concurrency",
            "2",
            "--no-write",
        ]
    )
    assert section.startswith("## Recall\n")
    [row] = [line for line in section.splitlines() if line.startswith("| file |")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert len(cells) == 9
    assert all(re.fullmatch(r"\d+(\.\d+)?", cell) for cell in cells[1:8])
    assert re.fullmatch(r"\d+\.\d–\d+\.\d", cells[8])
