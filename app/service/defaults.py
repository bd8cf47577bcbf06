"""The server's defaults that a request's options may override (built by `app.main`).

`options` holds the server's value of every request option that declares a setting
(`Setting` beside its field in `CompactOptions`): `Settings.options`, so a new option adds
nothing here; the rest are settings no request overrides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from app.core.decide import Thresholds
from app.core.ledger import LedgerBudget, summary_words_for
from app.core.options import CompactOptions, DecideParams, defaults_of, resolve_params


@dataclass(frozen=True)
class Defaults:
    """Server-wide defaults: the request options' (`options`) and the settings no request
    overrides."""

    options: CompactOptions = field(default_factory=lambda: defaults_of(CompactOptions))
    overflow_threshold: float = 0.9
    ledger: LedgerBudget = field(default_factory=LedgerBudget)
    summary_cooldown_seconds: float = 300.0
    # What an LLM summarizer reads: the whole transcript, or the service's digest of it.
    summary_mode: Literal["transcript", "digest"] = "transcript"

    @property
    def thresholds(self) -> Thresholds:
        decide = resolve_params(DecideParams, NO_OPTIONS, self.options)
        return decide.thresholds(self.overflow_threshold)

    def server_options_for(self, request: CompactOptions) -> CompactOptions:
        """The server's options for one request: the summary's word limit and an unset
        ledger budget follow the window the request names (a share of it, within a floor
        and a cap), so a request that sets neither gets the ones that fit its model."""
        window = resolve_params(DecideParams, request, self.options).context_window
        configured = resolve_params(_WindowScaled, NO_OPTIONS, self.options)
        share = self.ledger.share
        budget = LedgerBudget(share, self.ledger.floor, self.ledger.cap, configured.ledger_budget)
        scaled = _WindowScaled(
            max_summary_words=summary_words_for(window, share, configured.max_summary_words),
            ledger_budget=budget.tokens(window),
        )
        return self.options.model_copy(update=vars(scaled))


@dataclass(frozen=True)
class _WindowScaled:
    """The options whose server value `server_options_for` scales to a request's window
    (a record like a strategy's: `resolve_params` holds its fields to option names)."""

    max_summary_words: int
    ledger_budget: int | None = None


NO_OPTIONS = CompactOptions()
