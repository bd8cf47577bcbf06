"""Correctness, not timing: with the ledger no ground-truth fact of the corpus is lost."""

from __future__ import annotations

import pytest

from bench.fidelity import measure

pytestmark = pytest.mark.anyio


@pytest.mark.slow
async def test_the_ledger_keeps_every_fact_through_three_compactions() -> None:
    table = dict(await measure())
    for label, shares in table.items():
        if "+ ledger" in label:
            assert set(shares.values()) == {1.0}, label
    lossy = table["(b) lossy LLM, no ledger"]
    assert max(lossy.values()) < 0.5  # the benchmark can tell a lossy summarizer apart
