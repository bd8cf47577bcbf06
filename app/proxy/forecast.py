"""How the proxy judges one request of a session: our count raised to the provider's, where
it stands against the marks, and what the session's pace foresees (the turns a compaction
takes, the room they need, the part a compaction keeps as sent). Pure: the compactor
(`app.proxy.compactor`) decides with it and acts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.proxy import Head, Pace, Stage, stage, standing_tokens
from app.proxy.exchange import Exchange, ProxyPolicy

BYTES_PER_TOKEN_FLOOR = 2


@dataclass(frozen=True)
class Forecast:
    policy: ProxyPolicy
    limit: int
    factor: float  # our count to the provider's, at least 1
    pace: Pace

    @classmethod
    def of(
        cls, policy: ProxyPolicy, ex: Exchange, ratio: float | None, pace: Pace | None = None
    ) -> Forecast:
        """For `ex`, by the ratio the provider's answers showed, else by the model's margin."""
        factor = ratio if ratio is not None else 1 + ex.spec.margin
        return cls(policy, ex.limit, max(factor, 1.0), pace or Pace())

    def judged(self, raw: int) -> int:
        """Our count raised to the provider's."""
        return int(raw * self.factor + 0.999)

    def stage(self, tokens: int) -> Stage:
        return stage(tokens, self.limit, self.policy.marks)

    def worth(self, now: Stage, raw: int, headed: int) -> bool:
        """Whether a finished head that brings our count from `raw` to `headed` goes in:
        over the limit, any that sends fewer; below it, one that brings the request below
        the start mark. One that leaves it past the mark would break the provider's cache
        for a few tokens and have the next compaction begin from the very request it went
        into."""
        if now == "over":
            return headed < raw
        return self.stage(self.judged(headed)) == "below"

    def surely_below(self, size: int) -> bool:
        """Whether a body of `size` bytes is too small to reach the start mark whatever its
        tokens, to start early at the session's pace, or to be at risk: half its bytes bound
        its tokens (a token of agent text is three to four bytes; of any text, hardly ever
        under two), so most requests of a session are judged without being counted."""
        bound = self.judged(size // BYTES_PER_TOKEN_FLOOR)
        below = bound < self.policy.marks.start * self.limit
        return below and not self.foreseen(bound) and not self.at_risk(bound)

    def starts(self, tokens: int) -> bool:
        """Whether a background compaction begins: past the start mark once the session's
        pace would take the request to the splice mark before one begun now is ready, or
        would take it over the limit (one begun sooner is paid for and not used when the
        session stops short of it). Never below the mark: one begun there for a large turn
        the pace foresaw keeps too much by the splice mark when that turn does not come,
        and is begun again; the standby (`at_risk`) is kept for that turn instead, with no
        summarizer call. A session whose pace is not known yet (fewer than two requests
        seen) begins at the start mark."""
        if self.stage(tokens) == "below":
            return False
        unknown = len(self.pace.sizes) < 2
        due = tokens + self.room() >= self.policy.marks.splice * self.limit
        return unknown or due or self.foreseen(tokens)

    def foreseen(self, tokens: int, turns: int | None = None) -> bool:
        """Whether the session's pace takes `tokens` over the limit within `turns` (the
        turns a compaction takes, by default)."""
        turns = turns or self.pace.lookahead(self.policy.max_lookahead)
        return tokens + turns * self.judged(self.pace.growth()) > self.limit

    def at_risk(self, tokens: int) -> bool:
        """Whether the turn a standby is kept for (`surprise`) takes `tokens` over the
        limit: a standby head is kept ready for it (made by the extractive summarizer, in
        the background), since no compaction begun when that turn comes could be. (The
        session's latest turns are among the largest, so this holds too whenever one more
        turn at its pace would.)"""
        return tokens + self.surprise() > self.limit

    def surprise(self) -> int:
        """The turn a standby is kept for: the policy's multiple of the session's largest
        so far, a record that the session's next large turn (a file read after a few short
        commands) may well pass."""
        return self.judged(int(self.policy.surprise * self.pace.largest_growth()))

    def room(self) -> int:
        """The tokens the session is foreseen to add before its next compaction is ready:
        its turns' growth over the turns a compaction takes and one more."""
        turns = self.pace.lookahead(self.policy.max_lookahead) + 1
        return turns * self.judged(self.pace.growth())

    def ahead(self, tokens: int) -> int:
        """The tokens a request of `tokens` is foreseen to grow by before a compaction begun
        now goes in: the turns it takes at the session's average pace, and at least up to
        the splice mark."""
        turns = self.pace.lookahead(self.policy.max_lookahead)
        splice = int(self.policy.marks.splice * self.limit) - tokens
        return max(turns * self.judged(self.pace.typical()), splice)

    def keep(self, fixed: int, head: int, room: int = 0) -> int:
        """The tokens a compaction keeps as sent: what brings the request back to the target
        share of the limit with the head it will have (lower when the session's pace needs
        the room before the limit), within the policy's bounds."""
        policy, limit = self.policy, self.limit
        share = min(int(policy.target_share * limit), limit - room)
        target = share - fixed - head
        low, high = int(policy.min_keep_share * limit), int(policy.keep_share * limit)
        return max(low, min(high, target))

    def pin_budget(self, fixed: int) -> float:
        """The most the session's pinned first messages may take: the pin share of the
        limit, less what a head with the least kept part would pass the start mark by. A
        turn larger than the room left below the limit has the standby, which summarizes
        the pinned messages too when they leave it no room (`crowded`)."""
        policy, limit = self.policy, self.limit
        least = self.judged(fixed) + int((policy.head_share + policy.min_keep_share) * limit)
        return min(policy.pin_share * limit, policy.marks.start * limit - least)

    def pin(
        self, client: Sequence[Mapping[str, Any]], counts: Sequence[int], lead: int, fixed: int
    ) -> int:
        """Where the session's pinned first messages end in `client` (of `counts` tokens,
        after `lead` system messages): the latest cut before an assistant turn within the
        pin's budget (the request that ended there wrote that prefix to the provider's
        cache), else `lead` (`pin_budget`, and at least the policy's floor: a short first
        request costs no more kept than summarized). Their standing instructions are not
        counted: summarized, they would be carried as they are (`app.core.proxy.standing`)."""
        floor = min(self.policy.pin_share, self.policy.pin_floor) * self.limit
        budget = max(self.pin_budget(fixed), floor)
        pinned, total = lead, 0
        for index in range(lead, len(client) - 1):
            total += counts[index] - standing_tokens(client[index], counts[index])
            if self.judged(total) > budget:
                break
            if client[index + 1].get("role") == "assistant" != client[index].get("role"):
                pinned = index + 1
        return pinned

    def crowded(self, fixed: int, kept: int, summary: int) -> bool:
        """Whether the messages a head keeps before its new summary (pinned first ones, or
        a previous head), of `kept` tokens, leave it no room for the turn a standby is kept
        for: with the request's `fixed` part, a new summary of `summary` tokens and the
        least part kept as sent."""
        least = int(self.policy.min_keep_share * self.limit)
        turn = self.surprise()
        return self.judged(fixed) + kept + summary + least + turn > self.limit

    def crowded_by(
        self, pinned: Sequence[int], head: Head | None, fixed: int, summary: int
    ) -> bool:
        """Whether a standby that keeps the previous `head` as sent (past the fold share,
        the pinned messages alone, of `pinned` tokens each) is `crowded`: a summary of
        `summary` tokens guessed."""
        fold = head is None or head.tokens > self.policy.fold_share * self.limit
        held = self.judged(sum(pinned)) if fold or head is None else head.tokens
        return held > 0 and self.crowded(fixed, held, summary)
