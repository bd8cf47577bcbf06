"""Refusals no test spells: built from the parts a refusal is made of (an optional apology,
a first-person inability, the request's verb and object) in six languages, placed by
hypothesis under any heading style, section and position of a real summary; and real
summaries assembled from the conversation's facts in any order, which always pass."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.summary.check import accept_summary, check_summary, source_of
from tests.summary_answers import SECTION_TITLES, request

SOURCE = source_of(request())


def _german(prefix: str, obj: str, verb: str) -> str:
    subject = "kann ich" if prefix.startswith("Leider") else "ich kann"
    return f"{prefix}{subject} {obj} nicht {verb}."


def _parts(*groups: list[str]) -> st.SearchStrategy[str]:
    return st.tuples(*(st.sampled_from(g) for g in groups)).map("".join)


REFUSALS = st.one_of(
    _parts(
        ["", "I'm sorry, but ", "Unfortunately, ", "My apologies, but ", "I'm afraid "],
        ["I can't ", "I cannot ", "I'm unable to ", "I am not able to ", "I won't "],
        ["help with ", "summarize ", "assist with ", "provide a summary of ", "complete "],
        ["this conversation.", "that request.", "the history above.", "these messages."],
    ),
    _parts(
        ["", "抱歉，", "很抱歉，", "对不起，"],
        ["我无法", "我不能", "我没有办法"],
        ["总结", "帮助处理", "提供"],
        ["这段对话。", "这个请求。", "以上内容的摘要。"],
    ),
    _parts(
        ["", "Lo siento, pero ", "Lamentablemente, ", "Lo lamento, "],
        ["no puedo", "no me es posible"],
        [" resumir", " ayudar con", " completar"],
        [" esta conversación.", " esa solicitud."],
    ),
    st.builds(
        _german,
        st.sampled_from(["", "Es tut mir leid, aber ", "Leider "]),
        st.sampled_from(["diese Unterhaltung", "dabei", "diese Anfrage"]),
        st.sampled_from(["zusammenfassen", "helfen", "bearbeiten"]),
    ),
    _parts(
        ["", "Désolé, mais ", "Je suis désolée, ", "Malheureusement, "],
        ["je ne peux pas", "je ne suis pas en mesure de"],
        [" résumer", " traiter", " fournir"],
        [" cette conversation.", " cette demande."],
    ),
    _parts(
        ["", "申し訳ありませんが、", "すみませんが、", "残念ながら、"],
        ["この会話の", "このリクエストへの", ""],
        ["要約は", "対応は", "お手伝いは"],
        ["できません。", "いたしかねます。", "できかねます。"],
    ),
)
# Facts of the test conversation, as a summary states them.
FACTS = [
    "- The user wants the failing parser tests in `src/parser.py` fixed.",
    "- `src/parser.py` calls `yaml.safe_load`; it was read, not changed.",
    "- `pytest -q tests/test_parser.py` failed: ModuleNotFoundError, no module named yaml.",
    "- `pip install pyyaml` met 503 Service Unavailable at the first mirror.",
    "- pyyaml came from the second mirror; all parser tests pass now.",
    "- Off-topic questions get a fixed reply, as the user asked.",
    "- None.",
]
STYLES = ["## {t}", "### {t}", "**{t}**", "{n}. {t}", "{t}:"]


def render(style: str, bodies: list[list[str]]) -> str:
    return "\n".join(
        style.format(t=title, n=n) + "\n" + "\n".join(body)
        for n, (title, body) in enumerate(zip(SECTION_TITLES, bodies, strict=True), start=1)
    )


BODIES = st.lists(
    st.lists(st.sampled_from(FACTS[:-1]), min_size=1, max_size=3, unique=True)
    | st.just([FACTS[-1]]),
    min_size=5,
    max_size=5,
).filter(
    # a real summary says something under one heading at least, and not one same text
    # under three of them (that is repetition: `SAME_SECTIONS`)
    lambda bodies: (
        any(b != [FACTS[-1]] for b in bodies)
        and all(bodies.count(b) < 3 for b in bodies if b != [FACTS[-1]])
    )
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    refusal=REFUSALS,
    style=st.sampled_from(STYLES),
    bodies=BODIES,
    section=st.integers(0, 4),
    where=st.sampled_from(["replace", "before", "after", "inline"]),
)
def test_a_generated_refusal_anywhere_in_a_real_summary_fails(
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
    assert failure.reason == "refusal", (answer, str(failure))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(style=st.sampled_from(STYLES), bodies=BODIES)
def test_a_real_summary_in_any_arrangement_passes(style: str, bodies: list[list[str]]) -> None:
    answer = render(style, bodies)
    verdict = accept_summary(
        answer, template="sections", cap_tokens=10_000, count=len, source=SOURCE
    )
    assert verdict == answer
