"""The summary: which summarizer and what it reads, the LLM call's model, limits and
retries, the fact ledger's budget, and how many summaries run at once."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

Summarizer = Annotated[
    Literal["auto", "extractive", "anthropic", "openai"],
    Field(
        "auto",
        description=(
            "`auto` (anthropic when `COMPACT_ANTHROPIC_API_KEY` is set, else extractive; "
            "`ANTHROPIC_API_KEY` alone never turns it on), `extractive`, `anthropic`, "
            "`openai` (any OpenAI-compatible server)"
        ),
    ),
]

SummaryFallback = Annotated[
    Literal["none", "extractive"],
    Field(
        "extractive",
        description=(
            "when the LLM summary fails: `none` returns the messages unchanged "
            "(`summarization_failed`); `extractive` uses the extractive summary instead"
        ),
    ),
]

SummaryMode = Annotated[
    Literal["auto", "transcript", "digest"],
    Field(
        "auto",
        description=(
            "what an LLM summarizer reads: `transcript` (the whole history, in chunks, each "
            "tool result and call argument over 1200 characters as its beginning and end), "
            "`digest` (the service's notes on it, within 30% of its tokens: for small local "
            "models), `auto` (digest for `openai` on a loopback address, else transcript)"
        ),
    ),
]

LogRejectedSummaries = Annotated[
    bool,
    Field(
        False,
        description=(
            "log the first line (120 characters) of each LLM answer the summary check "
            "rejects; off by default: it may quote the history"
        ),
    ),
]

ReadyzRequiresSummarizer = Annotated[
    bool,
    Field(
        False,
        description=(
            "`/readyz` answers 503 while the `openai` summarizer's server does not answer "
            "`GET /models` (always reported as `summarizer_reachable`)"
        ),
    ),
]

SummaryModel = Annotated[
    str,
    Field(
        "claude-sonnet-4-5",
        description="model of the summary call (set it for `openai`, e.g. `qwen2.5-coder:32b`)",
    ),
]

LedgerShare = Annotated[
    float,
    Field(0.05, gt=0, le=0.5, description="the ledger's budget as a share of the context window"),
]

LedgerMinTokens = Annotated[
    int,
    Field(1000, ge=0, description="the ledger's budget, at least"),
]

LedgerMaxTokens = Annotated[
    int,
    Field(20_000, ge=0, description="the ledger's budget, at most"),
]

SummaryMaxTokens = Annotated[
    int,
    Field(4096, gt=0, description="`max_tokens` of the summary call"),
]

SummaryTemperature = Annotated[
    float,
    Field(
        0.0,
        ge=0,
        le=2,
        description="`temperature` of the summary call (0: the most likely answer, each time)",
    ),
]

SummaryTimeout = Annotated[
    float,
    Field(60.0, gt=0, description="seconds per attempt"),
]

SummaryAttempts = Annotated[
    int,
    Field(3, ge=1, le=10, description="attempts in all (retries on timeouts, 429, 5xx)"),
]

SummaryDeadline = Annotated[
    float,
    Field(120.0, gt=0, description="seconds for all attempts together"),
]

SummaryServerWindow = Annotated[
    int | None,
    Field(
        None,
        gt=0,
        description=(
            "`openai`: the context window of the summarizer's server in its own tokens, for "
            "a server that reports none (llama-cpp-python: its `--n_ctx`; Ollama without "
            "`num_ctx` in the Modelfile: its default context length); a reported window wins"
        ),
    ),
]

MaxConcurrentSummaries = Annotated[
    int,
    Field(
        64,
        ge=1,
        description=(
            "compactions summarizing at once, `/compact` and background jobs together; "
            "a bound on memory and on the LLM's load, not on throughput (the calls wait on "
            "the network)"
        ),
    ),
]

SummarySlotWait = Annotated[
    float,
    Field(
        1.0,
        ge=0,
        description=(
            "seconds a `/compact` waits for a free slot before 503 `busy` with `Retry-After` "
            "(`0`: at once); jobs wait as long as it takes"
        ),
    ),
]

SummaryCooldownSeconds = Annotated[
    float,
    Field(
        300.0,
        ge=0,
        description=(
            "after a failed summary in a session, summarizing strategies run `prune` instead "
            "for this long (`0` disables)"
        ),
    ),
]
