"""The proxy's judgement of one request (`app.proxy.forecast`): how much the session's
first messages may pin, the turn a standby is kept for and when what a head keeps crowds it
out, when a finished head is worth putting in, and when a background compaction begins."""

from __future__ import annotations

from app.core.proxy import Pace
from app.proxy.exchange import ProxyPolicy
from app.proxy.forecast import Forecast

LIMIT = 10_000
BYTES_PER_TOKEN = 3  # the pace's reading of a body's growth (app.core.proxy.pace)


def _forecast(growth: int = 0, largest: int = 0) -> Forecast:
    """A session whose latest turn added `growth` tokens, and its largest `largest`."""
    pace = Pace(sizes=[1_000, 1_000 + BYTES_PER_TOKEN * growth], largest=BYTES_PER_TOKEN * largest)
    return Forecast(ProxyPolicy(), LIMIT, 1.0, pace)


def test_the_pin_leaves_a_head_with_the_least_kept_part_below_the_start_mark() -> None:
    # 0.7 of the limit, less the fixed part and the least head (0.15 + 0.1); the session's
    # pace does not enter: a turn larger than the room the marks leave has the standby.
    assert _forecast().pin_budget(fixed=0) == 2_000  # the pin share caps it
    assert _forecast(growth=6_000).pin_budget(fixed=0) == 2_000
    assert _forecast().pin_budget(fixed=3_000) == 1_500
    assert _forecast().pin_budget(fixed=4_500) == 0
    assert _forecast().pin_budget(fixed=6_000) < 0  # nothing pinned


def test_a_standby_is_kept_for_a_turn_twice_the_sessions_largest() -> None:
    forecast = _forecast(largest=2_000)
    assert forecast.surprise() == 4_000
    assert not forecast.at_risk(6_000)
    assert forecast.at_risk(6_001)
    assert not _forecast().at_risk(9_999)  # no turn seen yet


def test_what_a_head_keeps_before_its_summary_crowds_the_turn_a_standby_is_kept_for() -> None:
    # fixed 500 + kept before the summary 2,000 + summary 1,000 + the least kept part
    # 1,000 + twice the largest turn.
    assert not _forecast(largest=2_750).crowded(fixed=500, kept=2_000, summary=1_000)
    assert _forecast(largest=2_751).crowded(fixed=500, kept=2_000, summary=1_000)
    assert not _forecast(largest=2_751).crowded(fixed=500, kept=0, summary=1_000)


def test_below_the_limit_a_head_goes_in_only_when_it_brings_the_request_below_the_start_mark() -> (
    None
):
    forecast = _forecast()
    assert forecast.worth("splice", 9_000, 6_999)
    assert not forecast.worth("splice", 9_000, 7_000)  # still at the start mark
    assert not forecast.worth("start", 7_500, 7_200)
    # Over the limit, any head that sends fewer tokens.
    assert forecast.worth("over", 10_500, 9_900)
    assert not forecast.worth("over", 10_500, 10_500)


def test_past_the_start_mark_a_compaction_begins_when_the_pace_reaches_the_splice_mark() -> None:
    # The start mark at 7,000, the splice mark at 8,500; turns of 200 tokens, two turns a
    # compaction and one more: it begins once 600 more tokens reach the splice mark.
    forecast = _forecast(growth=200)
    assert not forecast.starts(6_999)
    assert not forecast.starts(7_000)
    assert not forecast.starts(7_899)
    assert forecast.starts(7_900)
    # Turns of 500: at the start mark already (7,000 + 1,500).
    assert _forecast(growth=500).starts(7_000)
    # Below the start mark never, even when the pace takes it over the limit within two
    # turns (the standby is kept for that turn); at the mark, then.
    assert not _forecast(growth=2_001).starts(6_000)
    assert not _forecast(growth=2_001).starts(6_999)
    assert _forecast(growth=2_001).starts(7_000)


def test_a_session_whose_pace_is_not_known_begins_at_the_start_mark() -> None:
    forecast = Forecast(ProxyPolicy(), LIMIT, 1.0, Pace(sizes=[1_000]))
    assert not forecast.starts(6_999)
    assert forecast.starts(7_000)
