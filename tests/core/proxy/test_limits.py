from __future__ import annotations

import pytest

from app.core.proxy.limits import Marks, input_limit, output_budget, stage


@pytest.mark.parametrize(
    ("body", "budget"),
    [
        ({"max_tokens": 64_000}, 64_000),
        ({"max_completion_tokens": 8_000}, 8_000),
        ({"max_output_tokens": 4_096}, 4_096),
        ({}, 0),
        ({"max_tokens": True}, 0),
        ({"max_tokens": "100"}, 0),
    ],
)
def test_the_output_budget_is_what_the_request_reserves(
    body: dict[str, object], budget: int
) -> None:
    assert output_budget(body) == budget


def test_the_limit_is_the_window_less_the_output_budget_within_the_input_limit() -> None:
    assert input_limit(200_000, None, {"max_tokens": 64_000}) == 136_000
    assert input_limit(400_000, 272_000, {"max_completion_tokens": 10_000}) == 272_000
    assert input_limit(400_000, 272_000, {"max_completion_tokens": 200_000}) == 200_000
    assert input_limit(1_000, None, {"max_tokens": 5_000}) == 1


def test_the_stages_follow_the_marks() -> None:
    marks = Marks(0.7, 0.85)
    assert [stage(t, 1000, marks) for t in (699, 700, 849, 850, 1000, 1001)] == [
        "below",
        "start",
        "start",
        "splice",
        "splice",
        "over",
    ]


def test_marks_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="start <= splice"):
        Marks(0.9, 0.8)
