"""Overlap measures: words, shingles, containment, phrases and grounding."""

from __future__ import annotations

from app.core.summary.overlap import Reference, content_words, shingles, words


def test_words_are_lower_cased_and_cjk_characters_are_words_of_their_own() -> None:
    assert words("Fix src/Parser.py, 抱歉ok") == ["fix", "src", "parser", "py", "抱", "歉", "ok"]


def test_shingles_are_runs_of_four_words_or_the_whole_short_text() -> None:
    assert shingles(["a", "b", "c", "d", "e"]) == {("a", "b", "c", "d"), ("b", "c", "d", "e")}
    assert shingles(["a", "b"]) == {("a", "b")}
    assert shingles([]) == set()


def test_containment_and_phrases() -> None:
    ref = Reference.of("the agent read src/parser.py and ran the tests")
    assert ref.containment(shingles(words("agent read src parser"))) == 1.0
    assert ref.containment(shingles(words("lorem ipsum dolor sit"))) == 0.0
    assert ref.holds_phrase(["ran", "the", "tests"])
    assert not ref.holds_phrase(["ran", "tests"])
    assert not ref.holds_phrase([])


def test_grounding_counts_content_words_of_the_texts_scripts() -> None:
    ref = Reference.of("the agent read src/parser.py")
    assert content_words(["the", "a", "parser", "of", "解析"]) == {"parser", "解析"}
    assert ref.grounding(words("parser lorem")) == 0.5
    # Chinese words are not judged against a transcript without any
    assert ref.grounding(words("解析器 parser")) == 1.0
    assert ref.grounding(words("the a")) is None
    assert Reference.of("").grounding(words("parser")) is None
