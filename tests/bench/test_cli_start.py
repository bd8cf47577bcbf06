"""Smoke test of the command-line start benchmark: one round of every command, reported
beside `python -c pass`. No timing is asserted; the figures live in bench/RESULTS.md."""

from __future__ import annotations

import pytest

from bench.cli_start import COMMANDS, ROOT, SECTION, measure, report


@pytest.mark.slow
def test_one_round_times_every_command_and_reports_each() -> None:
    times = measure([ROOT], runs=1)
    assert sorted(times) == sorted((command.label, ROOT) for command in COMMANDS)
    assert all(len(found) == 1 and found[0] > 0 for found in times.values())
    text = report(times, None, runs=1, lanes=(0.064, 0.062, 201_189))
    assert text.startswith(SECTION + "\n")
    assert all(f"| {command.label} |" in text for command in COMMANDS)
    assert "64 ms to copy the encoding; counting a 201,189-token session" in text
