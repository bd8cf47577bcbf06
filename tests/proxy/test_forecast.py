"""The proxy's judgement of one request (`app.proxy.forecast`): how much the session's
first messages may pin, when pinned messages crowd out a turn as large as the session's
largest, and when a finished head is worth putting in."""

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


def test_the_pin_leaves_room_below_the_start_mark_for_one_more_turn_at_the_sessions_pace() -> None:
    # 0.7 of the limit, less the least head (0.15 + 0.1) and one turn.
    assert _forecast(growth=1_500).pin_budget(fixed=0) == 2_000  # the pin share caps it
    assert _forecast(growth=3_000).pin_budget(fixed=0) == 1_500
    assert _forecast(growth=3_000).pin_budget(fixed=500) == 1_000
    assert _forecast(growth=4_500).pin_budget(fixed=0) == 0
    assert _forecast(growth=6_000).pin_budget(fixed=0) < 0  # nothing pinned


def test_pinned_messages_crowd_a_turn_as_large_as_the_sessions_largest() -> None:
    # fixed 500 + pinned 2,000 + summary 1,000 + the least kept part 1,000 + the turn.
    assert not _forecast(largest=5_500).crowded(fixed=500, pinned=2_000, summary=1_000)
    assert _forecast(largest=5_501).crowded(fixed=500, pinned=2_000, summary=1_000)
    assert not _forecast(largest=5_501).crowded(fixed=500, pinned=0, summary=1_000)


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
