"""The server's options for one request: the window-dependent ones follow its window."""

from __future__ import annotations

from app.core.ledger.budget import LedgerBudget, summary_words_for
from app.core.options.compact import CompactOptions
from app.core.options.params import SummaryParams, resolve_params
from app.service.defaults import Defaults

LEDGER = LedgerBudget(share=0.05, floor=1000, cap=20_000)


def summary(sent: CompactOptions, defaults: Defaults) -> SummaryParams:
    return resolve_params(SummaryParams, sent, defaults.server_options_for(sent))


def test_a_small_window_lowers_the_servers_word_limit_and_sizes_the_ledger() -> None:
    defaults = Defaults(ledger=LEDGER)
    got = summary(CompactOptions(context_window=16_000), defaults)
    assert got.max_summary_words == summary_words_for(16_000, 0.05, 1200) == 600
    assert got.ledger_budget == 4000  # a quarter of a small window, over its 5% and the floor


def test_the_servers_window_applies_when_the_request_names_none() -> None:
    got = summary(CompactOptions(), Defaults(ledger=LEDGER))
    # The room a window gives the ledger (12000), over its 5% (10000 at 200k).
    assert (got.max_summary_words, got.ledger_budget) == (1200, 12_000)


def test_a_word_limit_or_ledger_budget_sent_is_kept_whatever_the_window() -> None:
    sent = CompactOptions(context_window=16_000, max_summary_words=1200, ledger_budget=0)
    got = summary(sent, Defaults(ledger=LEDGER))
    assert (got.max_summary_words, got.ledger_budget) == (1200, 0)


def test_a_fixed_server_ledger_budget_is_the_default_for_every_window() -> None:
    options = Defaults().options.model_copy(update={"ledger_budget": 700})
    got = summary(CompactOptions(context_window=16_000), Defaults(options=options, ledger=LEDGER))
    assert got.ledger_budget == 700


def test_the_server_thresholds_are_the_declared_defaults() -> None:
    thresholds = Defaults(overflow_threshold=0.95).thresholds
    assert (thresholds.context_window, thresholds.threshold, thresholds.min_messages) == (
        200_000,
        0.8,
        3,
    )
    assert thresholds.overflow_threshold == 0.95
