"""Smoke test of the load benchmark: a one-second run against the real server and a fake
LLM proves it drives all three routes and reports zero errors. No timing is asserted; the
figures live in bench/RESULTS.md."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.load import CYCLE, LoadConfig, percentile, render, run_load


def test_the_cycle_sends_45_percent_count_45_should_compact_10_compact() -> None:
    assert Counter(CYCLE) == {"/count": 9, "/should-compact": 9, "/compact": 2}
    assert CYCLE[:3] == ("/compact", "/count", "/should-compact")


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.50) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile([7.0], 0.99) == 7.0
    assert percentile([], 0.5) == 0.0


@pytest.mark.slow
def test_a_one_second_run_drives_every_route_without_errors() -> None:
    report = run_load(LoadConfig(seconds=1, clients=3, max_requests=30, llm_delay=0.05))
    assert report.errors == 0, [s.error_samples for s in report.routes.values()]
    assert 3 <= report.requests <= 30
    assert all(stats.latencies for stats in report.routes.values())
    compacts = len(report.routes["/compact"].latencies)
    # the fake LLM is on loopback: the digest path, one call per narrative section
    assert report.llm_calls == 2 * compacts
    text = render(report, "python -m bench.load --seconds 1")
    assert "| `/compact` |" in text
    assert f"{report.requests:,} requests, 0 errors" in text
