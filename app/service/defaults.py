"""The server's defaults that a request's options may override (built by `app.main`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.chunking import DEFAULT_SUMMARY_INPUT_BUDGET
from app.core.decide import Thresholds
from app.core.ledger import LedgerBudget
from app.core.restore import FileReadTool, RestoreLimits
from app.core.selective import SelectiveLimits


@dataclass(frozen=True)
class Defaults:
    """Server-wide defaults that a request's options may override."""

    thresholds: Thresholds
    restore: RestoreLimits
    read_tools: tuple[FileReadTool, ...]
    max_summary_words: int
    ledger_budget: int | None = None  # fixed; None: `ledger` of the context window
    ledger: LedgerBudget = field(default_factory=LedgerBudget)
    keep_recent_rounds: int = 10
    prune_keep_recent: int = 3
    prune_exclude_tools: tuple[str, ...] = ()
    prune_min_tokens: int = 0
    prune_clear_inputs: bool = False
    max_iterations: int = 0
    summary_cooldown_seconds: float = 300.0
    summary_input_budget: int = DEFAULT_SUMMARY_INPUT_BUDGET
    selective: SelectiveLimits = field(default_factory=SelectiveLimits)
