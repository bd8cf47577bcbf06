"""Summaries: the prompt and transcript form (`prompt`), the extractive summarizer
(`extractive`), the digest path (`digest`, `digest_summary`), chunked summaries
(`chunking`), the summarizer server's fit (`window_fit`, `server_ratio`, `local_speed`), and
the gate every LLM answer passes (`check`, with `sections`, `overlap`, `refusals`,
`answer_clean`; its reasons in `reasons`)."""

from app.core.summary.check import accept_summary, opening, signal_failure, source_of, stop_failure
from app.core.summary.chunking import (
    EXACT_CHECK_SHARE,
    Unit,
    carried_pair,
    cut_unit,
    next_chunk,
    prompt_overhead,
    prompt_tokens,
    transcript_bound,
    transcript_costs,
    units_of,
)
from app.core.summary.digest import (
    DIGEST_PROMPT_TOKENS,
    DIGEST_SHARE,
    DIGEST_SYSTEM,
    MODEL_SECTIONS,
    build_digest,
    build_section_prompt,
    digest_budget,
)
from app.core.summary.digest_summary import digest_summary
from app.core.summary.extractive import ExtractiveSummarizer
from app.core.summary.local_speed import CallBound, deadline_warning
from app.core.summary.prompt import (
    ARCHIVED_TITLE,
    STOP_SEQUENCES,
    SUMMARY_SYSTEM,
    build_archived_prompt,
    build_summary_prompt,
    serialize_for_summary,
)
from app.core.summary.reasons import known_reason
from app.core.summary.server_ratio import measured_ratio, ratio_sample
from app.core.summary.window_fit import fit_warning, fitted_budget

__all__ = [
    "ARCHIVED_TITLE",
    "DIGEST_PROMPT_TOKENS",
    "DIGEST_SHARE",
    "DIGEST_SYSTEM",
    "EXACT_CHECK_SHARE",
    "MODEL_SECTIONS",
    "STOP_SEQUENCES",
    "SUMMARY_SYSTEM",
    "CallBound",
    "ExtractiveSummarizer",
    "Unit",
    "accept_summary",
    "build_archived_prompt",
    "build_digest",
    "build_section_prompt",
    "build_summary_prompt",
    "carried_pair",
    "cut_unit",
    "deadline_warning",
    "digest_budget",
    "digest_summary",
    "fit_warning",
    "fitted_budget",
    "known_reason",
    "measured_ratio",
    "next_chunk",
    "opening",
    "prompt_overhead",
    "prompt_tokens",
    "ratio_sample",
    "serialize_for_summary",
    "signal_failure",
    "source_of",
    "stop_failure",
    "transcript_bound",
    "transcript_costs",
    "units_of",
]
