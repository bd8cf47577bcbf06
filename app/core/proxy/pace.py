"""How fast a proxied session grows and how long its compactions take, in its own turns.

A background compaction begun at the start mark is ready in time only when the session's
turns are small beside the room between that mark and the limit. An agent that reads a
large file each turn crosses that room in one or two turns: the pace says so, so that a
compaction begins early enough and leaves room for the turns that follow it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

BYTES_PER_TOKEN_TYPICAL = 3  # of an agent's JSON body, about: a forecast, not a bound
DEFAULT_LOOKAHEAD = 2  # turns a compaction takes until the session has timed one


@dataclass
class Pace:
    """The latest requests' sizes and times, and the last background compaction's time.

    Growth is read from the bodies' bytes, known for every request whether it was counted
    or not; a compaction's turns are its time over the time between the session's
    requests (smoothed, since an agent's turns vary)."""

    kept: int = 4  # the latest turns whose growth foretells the next ones
    sizes: list[int] = field(default_factory=list)
    last_at: float | None = None
    turn_seconds: float | None = None
    compaction_seconds: float | None = None
    largest: int = 0  # the most bytes one turn of the session added

    def seen(self, size: int, at: float) -> None:
        """A request of `size` bytes arrived at `at` (monotonic seconds)."""
        if self.last_at is not None:
            interval = max(0.0, at - self.last_at)
            previous = self.turn_seconds
            self.turn_seconds = interval if previous is None else 0.7 * previous + 0.3 * interval
        self.last_at = at
        if self.sizes:
            self.largest = max(self.largest, size - self.sizes[-1])
        self.sizes = [*self.sizes, size][-(self.kept + 1) :]

    def growth(self) -> int:
        """The most tokens one of the latest turns added (0 until two requests are seen;
        a turn that shrank the body, as a client's own compaction does, adds none)."""
        steps = [b - a for a, b in zip(self.sizes, self.sizes[1:], strict=False)]
        return max([0, *steps]) // BYTES_PER_TOKEN_TYPICAL

    def largest_growth(self) -> int:
        """The most tokens one turn of the session has added so far."""
        return self.largest // BYTES_PER_TOKEN_TYPICAL

    def typical(self) -> int:
        """The tokens the latest turns added, on average (0 until two requests are seen)."""
        steps = [max(0, b - a) for a, b in zip(self.sizes, self.sizes[1:], strict=False)]
        return sum(steps) // len(steps) // BYTES_PER_TOKEN_TYPICAL if steps else 0

    def lookahead(self, most: int) -> int:
        """The turns a compaction begun now is foreseen to take: at least one, at most
        `most`."""
        if not self.turn_seconds or self.compaction_seconds is None:
            return min(most, DEFAULT_LOOKAHEAD)
        return max(1, min(most, math.ceil(self.compaction_seconds / self.turn_seconds)))
