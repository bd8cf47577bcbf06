from __future__ import annotations

from app.core.recall.rank import (
    Candidate,
    PostingBudget,
    cut_snippet,
    rank,
    snippet_bounds,
)
from app.core.recall.terms import WordStat, parse_query


def candidate(order: int, index: int, digest: str, **words: tuple[int, int]) -> Candidate:
    stats = {word: WordStat(*stat) for word, stat in words.items()}
    return Candidate(order, f"a{order}", index, "user", None, digest, 1000, stats)


def test_terms_held_count_with_their_occurrences_and_all_terms_rank_higher() -> None:
    query = parse_query("alpha src/b.py")
    found = [
        candidate(0, 0, "d0", alpha=(9, 50)),  # 10 + 5
        candidate(0, 1, "d1", alpha=(1, 40), src=(2, 10), b=(1, 12), py=(3, 14)),  # 11+11+20
        candidate(0, 2, "d2", src=(2, 7), py=(1, 9)),  # b missing: no term held
    ]
    ranked = rank(found, query, 5)
    assert [(r.candidate.message_index, r.score, r.at) for r in ranked] == [
        (1, 42, 10),
        (0, 15, 50),
    ]


def test_ties_go_to_the_newer_archive_then_the_later_message_and_duplicates_go() -> None:
    query = parse_query("x")
    found = [
        candidate(0, 5, "same", x=(1, 0)),
        candidate(1, 2, "b", x=(1, 0)),
        candidate(1, 3, "same", x=(1, 0)),
        candidate(1, 3, "other", x=(1, 0)),  # the same place listed twice
    ]
    ranked = rank(found, query, 5)
    assert [(r.candidate.order, r.candidate.message_index) for r in ranked] == [(1, 3), (1, 2)]


def test_the_posting_budget_shares_its_total_between_the_words() -> None:
    budget = PostingBudget(["a", "b"], total=4)
    assert [budget.take("a"), budget.cut] == [True, False]
    assert [budget.take("a"), budget.cut] == [True, True]
    assert not budget.take("a")
    assert budget.open_words() == ["b"]
    assert budget.take("b")


def test_the_snippet_window_holds_the_offset_and_marks_its_cuts() -> None:
    assert snippet_bounds(1000, 5000, 400) == (900, 1300)
    assert snippet_bounds(10, 5000, 400) == (0, 400)
    assert snippet_bounds(4990, 5000, 400) == (4600, 5000)
    assert cut_snippet(" a\n b ", 900, 1300, 5000) == "… a b …"
    assert cut_snippet("a b", 0, 3, 3) == "a b"


def test_a_message_holding_the_query_as_typed_ranks_before_one_that_mentions_it_often() -> None:
    query = parse_query("git add .claude/")
    # A long message with each word many times, far apart and out of order.
    often = candidate(1, 4, "d4", git=(9, 400), add=(7, 900), claude=(12, 20))
    # The tool call that ran the command: `Bash {"command": "git add .claude/"}`.
    typed = candidate(0, 2, "d2", git=(1, 17), add=(1, 21), claude=(1, 26))
    ranked = rank([often, typed], query, 5)
    assert [r.candidate.message_index for r in ranked] == [2, 4]
