"""What an answer is, read from its form: cut off, placeholders, shuffled words, sections
that say something or a plain "none"."""

from __future__ import annotations

import pytest

from app.core.gate.alignment import PairIndex
from app.core.gate.entities import HistoryText
from app.core.gate.overlap import words
from app.core.gate.shape import (
    incomplete,
    is_none_statement,
    placeholders,
    says_something,
    shuffled,
)
from tests.builders import parse, user


@pytest.mark.parametrize(
    "text",
    ["Edited the parser and then the", "- ran `pytest -q", "Next, the tests,", "Wir haben den"],
)
def test_an_answer_cut_mid_sentence_is_incomplete(text: str) -> None:
    assert incomplete(text)


@pytest.mark.parametrize("text", ["Done.", "- Read `a.py`", "## Task Status\n- Tests pass"])
def test_a_finished_answer_is_complete(text: str) -> None:
    assert not incomplete(text)


def test_bracketed_descriptions_of_three_words_are_placeholders() -> None:
    text = "* [✓] done - [its result in brief]\n* <path of the file>\n* [x] ok"
    assert placeholders(text) == ["[its result in brief]", "<path of the file>"]


TRANSCRIPT = words(
    "the user asked to fix the parser so that empty files parse to an empty mapping and the "
    "agent edited the parser then ran the tests which passed after the second edit"
)


def test_the_conversations_words_in_no_order_are_shuffled() -> None:
    salad = [TRANSCRIPT[(i * 7) % len(TRANSCRIPT)] for i in range(60)]
    assert shuffled(salad, frozenset(TRANSCRIPT), PairIndex.of(TRANSCRIPT))


def test_sentences_about_the_conversation_are_not_shuffled() -> None:
    text = words(
        "the user asked to fix the parser so that empty files parse to an empty mapping; the "
        "agent edited the parser, then ran the tests, which passed after the second edit"
    )
    assert not shuffled(text, frozenset(TRANSCRIPT), PairIndex.of(TRANSCRIPT))


@pytest.mark.parametrize(
    "body",
    [
        "None.",
        "Nothing further is pending.",
        "Keine Fehler.",
        "无。",
        "- **Stack**: not shown",
        "N/A",
    ],
)
def test_a_plain_none_is_a_none_statement(body: str) -> None:
    assert is_none_statement(body)


@pytest.mark.parametrize("body", ["I don't know.", "Yes.", "Ich weiß es nicht.", "我不知道。"])
def test_a_first_person_or_bare_answer_is_no_none_statement(body: str) -> None:
    assert not is_none_statement(body)


HISTORY = HistoryText.of(parse([user("Fix src/parser.py so empty files parse to a mapping.")]))


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("Edited `src/parser.py`.", True),
        ("Empty files now parse.", True),
        ("Nothing further is pending.", True),
        ("This section would list the files.", False),
        ("ok", False),
    ],
)
def test_a_section_says_something_of_the_conversation_or_a_plain_none(
    body: str, says: bool
) -> None:
    instructions = frozenset(words("This section would list the files read and the goals"))
    assert says_something(body, HISTORY, instructions) is says
