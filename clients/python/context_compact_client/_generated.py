"""Generated from openapi.yaml by scripts/regenerate (scripts/client_types.py): do not
edit. The request's strategies and options, as the server declares them."""

from typing import Literal, TypedDict

Strategy = Literal["full", "tail", "selective", "prune"]


class CompactOptions(TypedDict, total=False):
    """Per-request overrides of the server's defaults; every field is optional."""

    strategy: Strategy
    tail_keep_recent_rounds: int | None
    prune_keep_recent: int | None
    prune_exclude_tools: list[str] | None
    prune_min_tokens: int | None
    prune_clear_inputs: bool | None
    max_iterations: int | None
    context_window: int | None
    threshold: float | None
    min_messages: int | None
    max_restore_files: int | None
    max_restore_tokens_per_file: int | None
    max_restore_tokens_total: int | None
    ledger_budget: int | None
    file_tools: list[str] | None
    max_summary_words: int | None
    read_tools: list[str] | None
    selective_keep_recent: int | None
    selective_tool_call_threshold: int | None
    selective_tool_result_threshold: int | None
    selective_preview_tokens: int | None
    selective_fallback_to_summary: bool | None
    fallback: bool | None
    summary_input_budget: int | None
    # Deprecated: former names of options above, still accepted (answers warn).
    keep_recent_rounds: int | None
    keep_recent: int | None
    tool_call_threshold: int | None
    tool_result_threshold: int | None
    preview_tokens: int | None
    fallback_to_summary: bool | None
