"""A session's pace: its turns' growth read from the bodies' bytes, and the turns a
compaction takes read from their times."""

from __future__ import annotations

from app.core.proxy.pace import BYTES_PER_TOKEN_TYPICAL, DEFAULT_LOOKAHEAD, Pace


def test_growth_is_the_largest_of_the_latest_turns_in_tokens() -> None:
    pace = Pace(kept=3)
    assert pace.growth() == 0
    for at, size in enumerate([1_000, 1_300, 31_300, 31_600, 31_900]):
        pace.seen(size, float(at))
    assert pace.growth() == 30_000 // BYTES_PER_TOKEN_TYPICAL
    pace.seen(32_200, 5.0)  # the large turn is no longer among the latest three
    assert pace.growth() == 300 // BYTES_PER_TOKEN_TYPICAL


def test_a_body_that_shrank_adds_no_growth() -> None:
    pace = Pace()
    for at, size in enumerate([90_000, 30_000]):
        pace.seen(size, float(at))
    assert pace.growth() == 0


def test_lookahead_is_a_compactions_time_in_the_sessions_turns() -> None:
    pace = Pace()
    assert pace.lookahead(4) == DEFAULT_LOOKAHEAD  # nothing timed yet
    for at in (0.0, 5.0, 10.0):
        pace.seen(100, at)
    assert pace.turn_seconds == 5.0
    pace.compaction_seconds = 11.0
    assert pace.lookahead(4) == 3
    pace.compaction_seconds = 60.0
    assert pace.lookahead(4) == 4  # at most
    pace.compaction_seconds = 0.5
    assert pace.lookahead(4) == 1  # at least one


def test_turn_time_is_smoothed() -> None:
    pace = Pace()
    for at in (0.0, 10.0, 12.0):
        pace.seen(100, at)
    assert pace.turn_seconds == 0.7 * 10.0 + 0.3 * 2.0
