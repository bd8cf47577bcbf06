"""Families of the held-out set, generated: refusals in Portuguese, Italian, Korean and
Russian built from their parts and placed anywhere in a real summary; reasoning in any
spelling before a real summary; the instructions with words changed; one true sentence
under three headings or more."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.summary.check import accept_summary, check_summary, source_of
from tests.core.summary.test_check_generated import BODIES, STYLES, render
from tests.summary_answers import SECTION_TITLES, SUMMARY, request

SOURCE = source_of(request())
INSTRUCTIONS = request().prompt.split("<conversation>")[0]


def _parts(*groups: list[str]) -> st.SearchStrategy[str]:
    return st.tuples(*(st.sampled_from(g) for g in groups)).map("".join)


REFUSALS = st.one_of(
    _parts(
        ["", "Desculpe, mas ", "Infelizmente, ", "Lamento, "],
        ["não posso ", "não consigo ", "não sou capaz de "],
        ["resumir ", "ajudar com ", "fornecer um resumo de "],
        ["esta conversa.", "este pedido."],
    ),
    _parts(
        ["", "Mi dispiace, ma ", "Purtroppo ", "Scusa, "],
        ["non posso ", "non riesco a ", "non sono in grado di "],
        ["riassumere ", "aiutarti con ", "fornire un riassunto di "],
        ["questa conversazione.", "questa richiesta."],
    ),
    _parts(
        ["", "죄송하지만 ", "죄송합니다. ", "안타깝게도 "],
        ["이 대화를 ", "이 요청은 ", ""],
        ["요약할 ", "도와드릴 ", "처리할 "],
        ["수 없습니다.", "수 없어요."],
    ),
    _parts(
        ["", "Извините, но ", "К сожалению, ", "Простите, "],
        ["я не могу ", "не могу ", "я не в состоянии "],
        ["помочь с ", "подвести итог ", "обобщить "],
        ["этим запросом.", "этого разговора."],
    ),
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    refusal=REFUSALS,
    style=st.sampled_from(STYLES),
    bodies=BODIES,
    section=st.integers(0, 4),
    where=st.sampled_from(["replace", "before", "after", "inline"]),
)
def test_a_refusal_in_four_more_languages_fails_anywhere(
    refusal: str, style: str, bodies: list[list[str]], section: int, where: str
) -> None:
    body = bodies[section]
    bodies[section] = {
        "replace": [refusal],
        "before": [refusal, *body],
        "after": [*body, refusal],
        "inline": [f"{body[0]} {refusal}", *body[1:]],
    }[where]
    answer = render(style, bodies)
    failure = check_summary(
        answer, template="sections", cap_tokens=10_000, count=len, source=SOURCE
    )
    assert failure is not None, answer
    assert failure.reason in {"refusal", "apology"}, (answer, str(failure))


# The ways models open and close their reasoning.
REASONING = [
    ("<think>\n", "\n</think>\n"),
    ("<thinking>\n", "\n</thinking>\n"),
    ("<analysis>\n", "\n</analysis>\n"),
    ('<reasoning effort="high">\n', "\n</reasoning>\n"),
    ("<|begin_of_thought|>", "<|end_of_thought|>\n"),
    ("[THINK]", "[/THINK]\n"),
    ("<|channel|>analysis<|message|>", "<|end|><|start|>assistant<|channel|>final<|message|>"),
]
THOUGHTS = st.lists(
    st.sampled_from(
        ["The user wants a summary.", "Five sections.", "Check the errors.", "src/parser.py"]
    ),
    min_size=1,
    max_size=4,
).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(spelling=st.sampled_from(REASONING), thought=THOUGHTS, closed=st.booleans())
def test_reasoning_in_any_spelling_is_removed_or_fails(
    spelling: tuple[str, str], thought: str, closed: bool
) -> None:
    opening, closing = spelling
    answer = opening + thought + (closing if closed else "\n") + SUMMARY
    verdict = accept_summary(
        answer, template="sections", cap_tokens=10_000, count=len, source=SOURCE
    )
    if closed:
        assert verdict == SUMMARY.strip()
    else:
        assert (None if isinstance(verdict, str) else verdict.reason) == "reasoning_only"


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    changes=st.lists(
        st.integers(0, 10_000),
        min_size=len(INSTRUCTIONS.split()) // 8,
        max_size=len(INSTRUCTIONS.split()) // 3,
    ),
    how=st.sampled_from(["drop", "misspell", "upper"]),
)
def test_the_instructions_with_words_changed_are_an_echo(changes: list[int], how: str) -> None:
    tokens = INSTRUCTIONS.split(" ")
    for change in changes:
        i = change % len(tokens)
        tokens[i] = {"drop": "", "misspell": tokens[i][::-1], "upper": tokens[i].upper()}[how]
    failure = check_summary(
        " ".join(tokens), template="sections", cap_tokens=10_000, count=len, source=SOURCE
    )
    assert (failure and failure.reason) == "echo", (changes, how)


FACTS = [
    "Fixed the parser tests in src/parser.py.",
    "pip install pyyaml met 503 Service Unavailable at the first mirror.",
    "pytest -q tests/test_parser.py failed with ModuleNotFoundError.",
]


@settings(max_examples=100, deadline=None)
@given(
    fact=st.sampled_from(FACTS),
    where=st.sets(st.integers(0, 4), min_size=3),
    style=st.sampled_from(STYLES),
)
def test_one_sentence_under_three_headings_or_more_is_repetitive(
    fact: str, where: set[int], style: str
) -> None:
    real = [[line] for line in SUMMARY.splitlines() if line.startswith("- ")][:5]
    bodies = [[fact] if i in where else real[i] for i in range(len(SECTION_TITLES))]
    failure = check_summary(
        render(style, bodies), template="sections", cap_tokens=10_000, count=len, source=SOURCE
    )
    assert (failure and failure.reason) == "repetitive"
