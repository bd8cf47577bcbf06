"""The deadline a request or job passes down to its blocking calls: nested deadlines keep
the earliest, leaving restores the outer one, and a reserve is kept for the answer."""

from __future__ import annotations

import pytest

from app.core.request_context import DEADLINE, answer_reserve, deadline_at


@pytest.mark.parametrize(
    ("seconds", "reserve"), [(2.0, 0.4), (3.0, 0.6), (5.0, 1.0), (20.0, 1.0), (300.0, 1.0)]
)
def test_the_answer_reserve_is_a_fifth_of_the_deadline_at_most_a_second(
    seconds: float, reserve: float
) -> None:
    assert answer_reserve(seconds) == pytest.approx(reserve)


def test_a_nested_deadline_keeps_the_earlier_one_and_leaving_restores_the_outer() -> None:
    assert DEADLINE.get() is None
    with deadline_at(100.0):
        assert DEADLINE.get() == 100.0
        with deadline_at(200.0):
            assert DEADLINE.get() == 100.0
        with deadline_at(50.0):
            assert DEADLINE.get() == 50.0
        assert DEADLINE.get() == 100.0
    assert DEADLINE.get() is None


def test_a_deadline_is_restored_when_its_block_raises() -> None:
    with pytest.raises(RuntimeError), deadline_at(10.0):
        raise RuntimeError("boom")
    assert DEADLINE.get() is None
