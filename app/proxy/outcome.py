"""What a proxied answer's `x-compact-*` headers say: the action taken, its reason, the
session, our counts before and after, `/count`'s count of the body sent (`app.proxy.as_counted`),
the proxy's own time, and what a head put in cost."""

from __future__ import annotations

from dataclasses import dataclass

from app.core.cost import SummarizerCost
from app.core.ports import RawHeaders
from app.core.proxy import Usage
from app.proxy.exchange import Action, Exchange, Planned
from app.proxy.headers import ours, summarizer_headers


@dataclass
class Outcome:
    """What the answer's `x-compact-*` headers say."""

    action: Action = "none"
    reason: str | None = None
    session: str | None = None
    before: int | None = None
    after: int | None = None
    usage: Usage | None = None  # the provider's count, read from a successful answer
    cost: SummarizerCost | None = None  # what the head put in cost (`summarizer_headers`)
    count: int | None = None  # `/count`'s count of the body the agent sent

    def headers(self, overhead_ms: float) -> RawHeaders:
        return ours(
            {
                "action": self.action,
                "reason": self.reason,
                "session": self.session,
                "tokens-before": self.before,
                "tokens-after": self.after,
                "count-tokens": self.count,
                "overhead-ms": f"{overhead_ms:.1f}",
                **summarizer_headers(self.cost),
            }
        )


def outcome_of(ex: Exchange, planned: Planned | None) -> Outcome:
    if planned is None:
        return Outcome(session=ex.session_id)
    return Outcome(
        planned.action,
        planned.reason,
        ex.session_id,
        planned.tokens_before,
        planned.tokens_after,
        cost=planned.cost,
    )
