"""Good answers lost to style (issue 44): a prose summary of long prose documents is no
word salad, a terse "Done." is a status, and a section saying what was there before what
was not denies nothing."""

from __future__ import annotations

import random
import re

import pytest

from app.core.errors import SummarizerError
from app.core.gate.alignment import PairIndex
from app.core.gate.overlap import words
from app.core.gate.shape import in_sentences, shuffled
from app.core.summary import Trimmed, serialize_for_summary
from tests.gate_answers import TITLES
from tests.gate_claims import PROSE, claims_set
from tests.gate_judge import CHECKER, requests
from tests.gate_sessions import BY_NAME

ANSWERS = {(a.session, a.kind): a for a in claims_set()}
HANDBOOK = BY_NAME["handbook"].messages
TRANSCRIPT = words(serialize_for_summary(HANDBOOK))
PAIRS = PairIndex.of(TRANSCRIPT)
SUMMARY = PROSE["handbook"][3]


def salad(seed: int) -> str:
    """The handbook's own words in no order, five lines of forty."""
    found = re.findall(r"[\w./-]+", serialize_for_summary(HANDBOOK))
    rng = random.Random(seed)
    return "\n".join(" ".join(rng.choice(found) for _ in range(40)) for _ in range(5))


def test_a_prose_summary_of_prose_documents_pairs_its_words_like_a_shuffle() -> None:
    # what the word-pair measure alone says: the reason good answers were refused
    assert shuffled(words(SUMMARY), frozenset(TRANSCRIPT), PAIRS)


def test_but_it_is_written_in_sentences_and_word_salad_is_not() -> None:
    assert in_sentences(SUMMARY)
    assert [in_sentences(salad(seed)) for seed in range(5)] == [False] * 5


@pytest.mark.parametrize("template", ["sections", "archived"])
def test_the_prose_answer_on_the_documents_is_used_whole(template: str) -> None:
    answer = ANSWERS[("handbook", "good-prose")]
    text = answer.sections if template == "sections" else answer.archived
    [request] = requests("handbook", template)  # type: ignore[arg-type]
    verdict = CHECKER._judge(text, request)
    assert isinstance(verdict, Trimmed), verdict
    assert verdict.warnings == ()


@pytest.mark.parametrize("seed", [0, 2, 3, 4, 5])  # seed 1 draws "sorry": an apology
def test_word_salad_of_the_documents_is_still_refused(seed: int) -> None:
    lines = salad(seed).splitlines()
    text = "\n".join(f"## {t}\n{line}." for t, line in zip(TITLES, lines, strict=True))
    [request] = requests("handbook", "sections")
    verdict = CHECKER._judge(text, request)
    assert isinstance(verdict, SummarizerError)
    assert verdict.reason == "incoherent"


def test_a_terse_done_is_the_status_of_a_finished_task() -> None:
    answer = ANSWERS[("cards", "good-terse")]
    goals, status = requests("cards", "digest")
    assert answer.digest[1] == "Done."
    assert isinstance(CHECKER._judge(answer.digest[0], goals), Trimmed)
    assert CHECKER._judge("Done.", status) == "Done."


def test_what_was_there_before_what_was_not_denies_nothing() -> None:
    [request] = requests("handbook", "sections")
    good = ANSWERS[("handbook", "good-prose")].sections
    said = "The two documents were read and nothing was written."
    assert said in good
    denial = good.replace(said, "No files were read, and none were changed.")
    verdict = CHECKER._judge(denial, request)
    assert isinstance(verdict, SummarizerError)
    assert (verdict.reason, str(verdict)) == (
        "says_nothing",
        "[says_nothing] sections that say nothing of the conversation: File Operations",
    )
