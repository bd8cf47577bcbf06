"""A request's options over the server's defaults, resolved once per compaction.

`resolve` is the one place a request value overrides a setting (only a missing value
falls back: an explicit 0 or false is honoured); strategies and steps read the resolved
values and never pick between the two themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.compaction import CompactOptions
from app.core.file_ops import Vocabulary
from app.core.ledger import LedgerBudget, summary_words_for
from app.core.prune import PruneRules
from app.core.restore import FileReadTool, RestoreLimits, read_tools_from
from app.core.selective import SelectiveLimits
from app.service.defaults import Defaults
from app.service.overrides import pick


@dataclass(frozen=True)
class Resolved:
    """Every knob of one compaction, with its value for this request."""

    max_summary_words: int
    summary_input_budget: int
    ledger_budget: int
    file_tools: tuple[str, ...]
    vocabulary: Vocabulary
    restore: RestoreLimits
    read_tools: tuple[FileReadTool, ...]
    keep_recent_rounds: int
    prune: PruneRules
    prune_min_tokens: int
    selective: SelectiveLimits
    max_iterations: int
    fallback: bool


def resolve(options: CompactOptions, defaults: Defaults) -> Resolved:
    o, d = options, defaults
    base, rules = d.restore, d.selective
    # The ledger's budget and the summary's word limit follow the window the request names:
    # a share of it within a floor and a cap, unless a fixed value is given.
    window = pick(o.context_window, d.thresholds.context_window)
    ledger = LedgerBudget(
        d.ledger.share, d.ledger.floor, d.ledger.cap, pick(o.ledger_budget, d.ledger_budget)
    )
    file_tools = tuple(o.file_tools or ())
    return Resolved(
        max_summary_words=o.max_summary_words
        or summary_words_for(window, d.ledger.share, d.max_summary_words),
        summary_input_budget=pick(o.summary_input_budget, d.summary_input_budget),
        ledger_budget=ledger.tokens(window),
        file_tools=file_tools,
        vocabulary=Vocabulary.from_specs(file_tools),
        restore=RestoreLimits(
            max_files=pick(o.max_restore_files, base.max_files),
            max_tokens_per_file=pick(o.max_restore_tokens_per_file, base.max_tokens_per_file),
            max_tokens_total=pick(o.max_restore_tokens_total, base.max_tokens_total),
        ),
        read_tools=read_tools_from(o.read_tools) if o.read_tools else d.read_tools,
        keep_recent_rounds=pick(o.keep_recent_rounds, d.keep_recent_rounds),
        prune=PruneRules(
            keep_recent=pick(o.prune_keep_recent, d.prune_keep_recent),
            exclude_tools=frozenset(pick(o.prune_exclude_tools, d.prune_exclude_tools)),
            clear_inputs=pick(o.prune_clear_inputs, d.prune_clear_inputs),
        ),
        prune_min_tokens=pick(o.prune_min_tokens, d.prune_min_tokens),
        selective=SelectiveLimits(
            keep_recent=pick(o.keep_recent, rules.keep_recent),
            tool_call_threshold=pick(o.tool_call_threshold, rules.tool_call_threshold),
            tool_result_threshold=pick(o.tool_result_threshold, rules.tool_result_threshold),
            preview_tokens=pick(o.preview_tokens, rules.preview_tokens),
            fallback_to_summary=pick(o.fallback_to_summary, rules.fallback_to_summary),
        ),
        max_iterations=pick(o.max_iterations, d.max_iterations),
        fallback=pick(o.fallback, True),
    )
