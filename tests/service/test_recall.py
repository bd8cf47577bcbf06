"""The recall service: the deadline it hands the store, the query it parses."""

from __future__ import annotations

import pytest

from app.core.recall.search import RecallResult, TimeLeft
from app.core.recall.terms import Query
from app.service.recall import Recaller
from tests.builders import MemoryArchive

pytestmark = pytest.mark.anyio


class Watching(MemoryArchive):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[int, float]] = []

    def search(
        self, session_id: str, query: Query, limit: int, time_left: TimeLeft
    ) -> RecallResult:
        self.seen.append((len(query.terms), time_left()))
        return RecallResult([], complete=False)


async def test_the_store_gets_the_earlier_of_the_two_deadlines() -> None:
    store = Watching()
    recaller = Recaller(store, slots=1, wait=0, deadline=10.0, clock=lambda: 100.0)
    await recaller.recall("s-1", "a b", 5)
    await recaller.recall("s-1", "a b", 5, due=103.0)
    await recaller.recall("s-1", "a b", 5, due=130.0)
    assert store.seen == [(2, 10.0), (2, 3.0), (2, 10.0)]


async def test_the_answer_names_the_dropped_terms_and_the_stores_completeness() -> None:
    recaller = Recaller(Watching(), slots=1, wait=0, deadline=10.0)
    answer = await recaller.recall("s-1", " ".join(f"w{i}" for i in range(66)), 5)
    assert (answer.hits, answer.dropped_terms, answer.complete) == ([], ("w64", "w65"), False)
