"""An edit told the other way round: "changed models.py to require non-empty `title`" when
the edit took `title` out of the validator is dropped as `direction`; the edit told the
right way, or about a name both sides keep, passes."""

from __future__ import annotations

import pytest

from app.core.gate.claims import Facts, false_claim
from app.core.gate.entities import HistoryText, entities
from app.core.gate.evidence import Evidence
from app.core.provider.formats import parse_messages
from app.core.summary import Trimmed
from tests.builders import assistant, tool_result, tool_use, user

OLD = '    @field_validator("title", "snippet", "source")\n    def not_empty(cls, v):'
NEW = '    @field_validator("source")\n    def not_empty(cls, v):'
RAW = [
    user("Search results with an empty title or snippet crash the scraper; allow them."),
    assistant(
        "Relaxing the validator.",
        tool_use("Edit", "e1", file_path="src/models.py", old_string=OLD, new_string=NEW),
    ),
    tool_result("e1", "The file src/models.py has been updated."),
]
MESSAGES = parse_messages(RAW, "anthropic")
FACTS = Facts.of(Evidence.of(MESSAGES), HistoryText.of(list(MESSAGES), ""))


def rule(sentence: str, key: str = "file operations") -> str | None:
    return false_claim(sentence, key, entities(sentence), FACTS)


def test_an_edit_has_its_two_sides() -> None:
    [step] = Evidence.of(MESSAGES).steps
    assert '"title", "snippet"' in step.removed
    assert "title" not in step.added


def test_an_edit_diff_of_search_and_replace_has_its_two_sides() -> None:
    diff = "<<<<<<< SEARCH\n  if (x <= 0)\n=======\n  if (x < 0)\n>>>>>>> REPLACE"
    raw = [assistant(tool_use("replace_in_file", "d1", path="a.cs", diff=diff))]
    [step] = Evidence.of(parse_messages(raw, "anthropic")).steps
    assert (step.removed, step.added) == ("  if (x <= 0)", "  if (x < 0)")


@pytest.mark.parametrize(
    "sentence",
    [
        "Changed `src/models.py` to require non-empty strings for `title` and `snippet`.",
        "`src/models.py` now validates `title` and `snippet` as non-empty.",
        "The edit of `models.py` makes `title` mandatory.",
    ],
)
def test_an_edit_told_the_other_way_round_is_dropped(sentence: str) -> None:
    assert rule(sentence) == "direction"


@pytest.mark.parametrize(
    "sentence",
    [
        "`src/models.py`: `title` and `snippet` no longer require non-empty strings.",
        "Removed `title` and `snippet` from the validator in `src/models.py`.",
        "`src/models.py` still requires a non-empty `source`.",  # kept on both sides
        "Changed `src/models.py` to allow empty `title` and `snippet`.",
    ],
)
def test_an_edit_told_the_right_way_passes(sentence: str) -> None:
    assert rule(sentence) is None


def test_a_goal_is_not_an_edit() -> None:
    goal = "Make `src/models.py` require non-empty strings for `title`."
    assert rule(goal, "goals") is None


def test_the_reversed_edit_is_dropped_from_a_faithful_answer_and_named() -> None:
    from tests.gate_edits import edits_set, sessions
    from tests.gate_judge import CHECKER, requests
    from tests.gate_sessions import BY_NAME

    BY_NAME.update({s.name: s for s in sessions()})
    answers = {a.kind: a for a in edits_set()}
    [request] = requests("scraper", "sections")
    reversed_ = answers["edit-reversed"]
    verdict = CHECKER._judge(reversed_.sections, request)
    assert isinstance(verdict, Trimmed), verdict
    assert verdict.warnings == (f"summary: dropped [direction] “{reversed_.false}”",)
    for kind in ("good-claims", "good-terse"):
        good = CHECKER._judge(answers[kind].sections, request)
        assert isinstance(good, Trimmed)
        assert good.warnings == ()
