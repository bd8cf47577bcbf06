from __future__ import annotations

from typing import Any

import pytest

from app.core.provider.budget import OutputBudget, output_budget


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"max_tokens": 64_000}, OutputBudget(64_000, "max_tokens")),
        ({"max_completion_tokens": 4096}, OutputBudget(4096, "max_completion_tokens")),
        ({"max_output_tokens": 128_000}, OutputBudget(128_000, "max_output_tokens")),
        (
            {"max_tokens": 1000, "max_completion_tokens": 3000},
            OutputBudget(3000, "max_completion_tokens"),
        ),
        ({}, OutputBudget()),
        ({"max_tokens": None}, OutputBudget()),
        ({"max_tokens": True}, OutputBudget()),
        ({"max_tokens": "64000"}, OutputBudget()),
        ({"max_tokens": -5}, OutputBudget()),
    ],
)
def test_the_output_budget_is_the_largest_output_field_sent(
    body: dict[str, Any], expected: OutputBudget
) -> None:
    assert output_budget(body) == expected
