"""The server's defaults that a request's options may override (built by `app.main`).

`options` holds the server's value of every request option that declares a setting
(`Setting` beside its field in `CompactOptions`), filled from the settings generically, so a
new option adds nothing here; the rest are settings no request overrides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from app.core.decide import Thresholds
from app.core.ledger import LedgerBudget, summary_words_for
from app.core.options import CompactOptions, DecideParams, resolve_params, settings_of


def server_options(settings: Mapping[str, Any]) -> CompactOptions:
    """The server's value of each request option, from its setting's value by setting name.
    Not validated against the request's bounds: a server may allow more than a request
    (e.g. `tail_keep_recent_rounds`)."""
    values: dict[str, Any] = {
        field: settings[name] for name, (field, _) in settings_of(CompactOptions).items()
    }
    return CompactOptions.model_construct(**values)


def declared_defaults() -> dict[str, object]:
    """Every declared setting at its declared default, by setting name."""
    return {
        name: spec.default_factory() if spec.default_factory else spec.default
        for name, (_, spec) in settings_of(CompactOptions).items()
    }


@dataclass(frozen=True)
class Defaults:
    """Server-wide defaults: the request options' (`options`) and the settings no request
    overrides."""

    options: CompactOptions = field(default_factory=lambda: server_options(declared_defaults()))
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
