"""The server's defaults that a request's options may override (built by `app.main`).

`options` holds the server's value of every request option that declares a setting
(`Setting` beside its field in `CompactOptions`), filled from the settings generically, so a
new option adds nothing here; the rest are settings no request overrides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from app.core.compaction import CompactOptions
from app.core.decide import Thresholds
from app.core.ledger import LedgerBudget
from app.core.option_setting import settings_of
from app.service.overrides import need


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
        o = self.options
        return Thresholds(
            context_window=need(o.context_window, "context_window"),
            threshold=need(o.threshold, "threshold"),
            overflow_threshold=self.overflow_threshold,
            min_messages=need(o.min_messages, "min_messages"),
        )
