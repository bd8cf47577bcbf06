"""Issue 44's wrong answers, one sentence false in a faithful summary: the false sentence
is dropped with a warning naming its rule, the rest is used as written."""

from __future__ import annotations

import pytest

from app.core.errors import SummarizerError
from app.core.summary import Trimmed
from tests.gate_answers import Answer, dev_set
from tests.gate_claims import claims_set, good_set
from tests.gate_judge import CHECKER, requests

ANSWERS = {(a.session, a.kind): a for a in claims_set()}


def judged(session: str, kind: str) -> Trimmed | SummarizerError:
    answer = ANSWERS[(session, kind)]
    [request] = requests(session, "sections")
    return CHECKER._judge(answer.sections, request)


@pytest.mark.parametrize(
    ("session", "kind", "rule"),
    [
        ("cards", "status-inverted", "status"),
        ("shop", "status-inverted", "status"),
        ("launch", "status-inverted", "status"),
        ("parser", "status-inverted", "status"),
        ("colon", "status-inverted", "status"),
        ("marshmallow", "status-inverted", "status"),
        ("pydicom", "status-inverted", "status"),
        ("injection", "status-inverted", "status"),
        ("cards", "stale-state", "status"),
        ("shop", "stale-state", "status"),
        ("launch", "stale-state", "status"),
        ("colon", "stale-state", "status"),
        ("cards", "error-misattributed", "attribution"),
        ("shop", "error-misattributed", "attribution"),
        ("launch", "error-misattributed", "attribution"),
        ("marshmallow", "error-misattributed", "attribution"),
        ("cards", "roles-swapped", "not_user"),
        ("shop", "roles-swapped", "not_user"),
        ("parser", "roles-swapped", "not_user"),
        ("injection", "roles-swapped", "borrowed"),  # its words are in a tool call too
        ("cards", "unasked-next-step", "unasked"),
        ("shop", "unasked-next-step", "unasked"),
        ("parser", "unasked-next-step", "unasked"),
        ("cards", "injection", "instruction"),
        ("shop", "injection", "instruction"),
        ("launch", "injection", "instruction"),
        ("parser", "injection", "instruction"),
        ("colon", "injection", "instruction"),
        ("cards", "wrong-number", "number"),
        ("shop", "wrong-number", "number"),
        ("launch", "wrong-number", "number"),
        ("pydicom", "wrong-number", "foreign"),  # 187 is nowhere in the history
        ("injection", "wrong-number", "number"),
    ],
)
def test_the_false_sentence_is_dropped_and_named_with_its_rule(
    session: str, kind: str, rule: str
) -> None:
    verdict = judged(session, kind)
    false = ANSWERS[(session, kind)].false
    assert isinstance(verdict, Trimmed), verdict
    assert verdict.warnings == (f"summary: dropped [{rule}] “{false}”",)
    assert false not in verdict


def test_the_rest_of_the_answer_is_kept_as_written() -> None:
    verdict = judged("cards", "injection")
    assert isinstance(verdict, Trimmed)
    good = ANSWERS[("cards", "good-claims")].sections
    assert verdict == good.replace(f"\n- {ANSWERS[('cards', 'injection')].false}", "")


def test_a_number_is_checked_with_its_neighbour_word_not_alone() -> None:
    # 2 occurs in the history (a cost of 2), never as an exit code
    verdict = judged("cards", "wrong-number")
    assert isinstance(verdict, Trimmed)
    assert "exit code 2." not in verdict
    assert "exit code 127" not in verdict  # the sentence it replaced


@pytest.mark.parametrize("answer", good_set(), ids=lambda a: a.name)
def test_good_answers_of_every_style_are_used_whole(answer: Answer) -> None:
    for template, text in (("sections", answer.sections), ("archived", answer.archived)):
        [request] = requests(answer.session, template)  # type: ignore[arg-type]
        verdict = CHECKER._judge(text, request)
        assert isinstance(verdict, Trimmed), (template, verdict)
        assert verdict.warnings == (), template


@pytest.mark.parametrize("session", ["cards", "shop", "launch"])
def test_an_answer_leaving_out_the_latest_request_is_refused_as_stale(session: str) -> None:
    verdict = judged(session, "latest-request-left-out")
    assert isinstance(verdict, SummarizerError)
    assert verdict.reason == "stale"
    assert (
        str(verdict) == "[stale] the answer's goals and status leave out the user's latest request"
    )


def test_a_status_is_checked_at_the_time_the_sentence_speaks_of() -> None:
    # `npm test` failed first and passed later: "at first" is true of the failure
    verdict = judged("shop", "good-claims")
    assert isinstance(verdict, Trimmed)
    assert "3 failed and 9 passed at first" in verdict
    # the same command said to pass now, after a last run that failed, is dropped
    assert judged("shop", "status-inverted").warnings == (  # type: ignore[union-attr]
        "summary: dropped [status] “The new empty-cart test passes now and `npm test` is green.”",
    )


def test_an_answer_mostly_false_is_refused_naming_its_false_sentences() -> None:
    [answer] = [a for a in dev_set() if a.name == "injection/inverted"]
    [request] = requests("injection", "sections")
    verdict = CHECKER._judge(answer.sections, request)
    assert isinstance(verdict, SummarizerError)
    assert verdict.reason == "misleading"
    assert str(verdict) == (
        "[misleading] most of the answer's claims are false: "
        "[status] “acme/cli.py was only read, never edited.”; "
        "[status] “pytest -q tests/test_cli.py passed on the first run.”; "
        "[status] “No test ever failed.”"
    )
