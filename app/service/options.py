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
from app.service.overrides import need, pick


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
    tail_keep_recent_rounds: int
    prune: PruneRules
    prune_min_tokens: int
    selective: SelectiveLimits
    max_iterations: int
    fallback: bool


def merged(options: CompactOptions, defaults: Defaults) -> CompactOptions:
    """The request's options over the server's: every field the request left out (None)
    takes the server's value."""
    given = {name: value for name, value in options if value is not None}
    return defaults.options.model_copy(update=given)


def resolve(options: CompactOptions, defaults: Defaults) -> Resolved:
    o = merged(options, defaults)
    ledger = defaults.ledger
    # The ledger's budget and the summary's word limit follow the window the request names:
    # a share of it within a floor and a cap, unless a fixed value is given.
    window = need(o.context_window, "context_window")
    budget = LedgerBudget(ledger.share, ledger.floor, ledger.cap, o.ledger_budget)
    file_tools = tuple(o.file_tools or ())
    server_words = need(defaults.options.max_summary_words, "max_summary_words")
    return Resolved(
        max_summary_words=options.max_summary_words
        or summary_words_for(window, ledger.share, server_words),
        summary_input_budget=need(o.summary_input_budget, "summary_input_budget"),
        ledger_budget=budget.tokens(window),
        file_tools=file_tools,
        vocabulary=Vocabulary.from_specs(file_tools),
        restore=RestoreLimits(
            max_files=need(o.max_restore_files, "max_restore_files"),
            max_tokens_per_file=need(o.max_restore_tokens_per_file, "max_restore_tokens_per_file"),
            max_tokens_total=need(o.max_restore_tokens_total, "max_restore_tokens_total"),
        ),
        read_tools=read_tools_from(need(o.read_tools, "read_tools")),
        tail_keep_recent_rounds=need(o.tail_keep_recent_rounds, "tail_keep_recent_rounds"),
        prune=PruneRules(
            keep_recent=need(o.prune_keep_recent, "prune_keep_recent"),
            exclude_tools=frozenset(need(o.prune_exclude_tools, "prune_exclude_tools")),
            clear_inputs=need(o.prune_clear_inputs, "prune_clear_inputs"),
        ),
        prune_min_tokens=need(o.prune_min_tokens, "prune_min_tokens"),
        selective=SelectiveLimits(
            keep_recent=need(o.selective_keep_recent, "selective_keep_recent"),
            tool_call_threshold=need(
                o.selective_tool_call_threshold, "selective_tool_call_threshold"
            ),
            tool_result_threshold=need(
                o.selective_tool_result_threshold, "selective_tool_result_threshold"
            ),
            preview_tokens=need(o.selective_preview_tokens, "selective_preview_tokens"),
            fallback_to_summary=need(
                o.selective_fallback_to_summary, "selective_fallback_to_summary"
            ),
        ),
        max_iterations=need(o.max_iterations, "max_iterations"),
        fallback=pick(o.fallback, True),
    )
