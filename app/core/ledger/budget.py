"""The ledger's token budget and the summary's word limit, both following the window.

The ledger's facts (commands, paths, errors, requests) do not shrink with the model's
window, so a small window gives the ledger a larger share of itself; a large one a share
within a cap. The summary's word limit is the same share of the window, as words.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_LEDGER_BUDGET = 1500  # the budget of a ledger asked for without a window
DEFAULT_LEDGER_SHARE = 0.05
DEFAULT_LEDGER_FLOOR = 1000
DEFAULT_LEDGER_CAP = 20_000
# What a small window gives the ledger beyond its share: up to `SMALL_WINDOW_ROOM` tokens,
# never over `SMALL_WINDOW_SHARE` of the window (8000 tokens at 32k, 12000 at 64k and
# 128k: a long session's requests, errors and grouped commands took about 11000 at 64k,
# under a fifth of it). A budget is a bound, not a reservation: a short session's ledger
# stays short.
SMALL_WINDOW_ROOM = 12_000
SMALL_WINDOW_SHARE = 0.25


SUMMARY_WORDS_FLOOR = 200
WORDS_PER_TOKEN = 0.75  # English prose in cl100k-like tokenizers, roughly


def summary_words_for(context_window: int, share: float, configured: int) -> int:
    """The summary's word limit for a window: `share` of it in tokens, as words, at most
    the configured limit and at least `SUMMARY_WORDS_FLOOR` (a 64k window or larger keeps
    the default 1200 words)."""
    scaled = int(context_window * share * WORDS_PER_TOKEN)
    return min(configured, max(SUMMARY_WORDS_FLOOR, scaled))


@dataclass(frozen=True)
class LedgerBudget:
    """The ledger's budget: `share` of the context window, at least `floor` and at most
    `cap` tokens; `fixed` (when set) instead of all three, 0 turning the ledger off.

    A small window gets a larger share (`SMALL_WINDOW_ROOM`, at most `SMALL_WINDOW_SHARE`
    of it): a session's commands, paths, errors and requests do not shrink with the
    model's window, and at 32k the narrative and the work still leave room for them."""

    share: float = DEFAULT_LEDGER_SHARE
    floor: int = DEFAULT_LEDGER_FLOOR
    cap: int = DEFAULT_LEDGER_CAP
    fixed: int | None = None

    def tokens(self, context_window: int) -> int:
        if self.fixed is not None:
            return self.fixed
        room = min(SMALL_WINDOW_ROOM, int(context_window * SMALL_WINDOW_SHARE))
        return max(self.floor, room, min(self.cap, int(context_window * self.share)))
