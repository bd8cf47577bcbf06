"""The first settings, in the configuration table's order: where the agent's files and our
data live (the work and data directories, PostgreSQL), when and how a history is compacted
and summarized, the LLM servers and keys, and the background jobs. `Settings`
(app/settings/model.py) declares the rest after these: pydantic keeps a parent's fields first, so
the table's rows stay in declaration order. Not read on its own: only `Settings` has the
prefix, the sources and the checks.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, NoDecode

from app.core.model_table import ModelSpec
from app.settings.sources import place


# Fields only, and no docstring: a class docstring would become a schema description.
class CompactionSettings(BaseSettings):
    workdir: str = Field(".", description="the agent's work directory, read-only for us")
    workdir_aliases: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description=(
            "comma-separated absolute paths under which the agent sees the work directory "
            "(e.g. `/home/me/project`); absolute paths below them map into it"
        ),
    )
    data_dir: str = Field(
        "./data",
        description=(
            "where archives, background compaction jobs, session records and seen file "
            "times are written"
        ),
    )
    database_url: SecretStr | None = Field(
        None,
        description=(
            "a PostgreSQL URL (`postgresql://user:pass@host:5432/db`): archives, session "
            "records, seen times and background jobs live there instead of `data_dir`, for "
            "replicas without a shared volume (docs/postgres.md); never logged"
        ),
    )
    database_pool_min: int = Field(
        1, ge=0, description="database connections each replica keeps open"
    )
    database_pool_max: int = Field(
        10, ge=1, description="database connections each replica may open at most"
    )
    database_pool_wait: float = Field(
        5.0,
        gt=0,
        description=(
            "seconds a request waits for a free database connection (then the storage "
            "failure: `archive_failed`, or `503` for jobs)"
        ),
    )
    database_connect_timeout: int = Field(
        5, ge=1, description="seconds to establish one database connection"
    )
    database_statement_timeout: float = Field(
        10.0, ge=0, description="seconds one SQL statement may run (`0`: no limit)"
    )
    database_call_timeout: float = Field(
        15.0,
        gt=0,
        description=(
            "seconds one database call may take, the wait for a connection included; past "
            "it (or past the request's deadline) its connection is closed and discarded, "
            "so a stalled database fails the call instead of holding it"
        ),
    )
    database_keepalives_idle: int = Field(
        10, ge=1, description="seconds a database connection is silent before TCP keepalives"
    )
    database_keepalives_interval: int = Field(
        5, ge=1, description="seconds between unanswered TCP keepalives"
    )
    database_keepalives_count: int = Field(
        3, ge=1, description="unanswered TCP keepalives before the connection is dropped"
    )
    database_tcp_user_timeout: float = Field(
        25.0,
        ge=0,
        description=(
            "seconds data sent to the database may stay unacknowledged before the kernel "
            "drops the connection (`0`: the system's default)"
        ),
    )
    place(vars(), "context_window", "threshold")
    overflow_threshold: float = Field(
        0.9, gt=0, le=1, description="report `overflow` at this share"
    )
    models: dict[str, ModelSpec] = Field(
        default_factory=dict,
        description=(
            "JSON object of models added to or replacing the built-in table "
            '(docs/models.md), e.g. `{"my-model": {"context_window": 32000, '
            '"tokenizer": "tiktoken"}}`'
        ),
    )
    place(
        vars(),
        "min_messages",
        "max_restore_files",
        "max_restore_tokens_per_file",
        "max_restore_tokens_total",
        "read_tools",
    )
    summarizer: Literal["auto", "extractive", "anthropic", "openai"] = Field(
        "auto",
        description=(
            "`auto` (anthropic when `COMPACT_ANTHROPIC_API_KEY` is set, else extractive; "
            "`ANTHROPIC_API_KEY` alone never turns it on), `extractive`, `anthropic`, "
            "`openai` (any OpenAI-compatible server)"
        ),
    )
    summary_fallback: Literal["none", "extractive"] = Field(
        "extractive",
        description=(
            "when the LLM summary fails: `none` returns the messages unchanged "
            "(`summarization_failed`); `extractive` uses the extractive summary instead"
        ),
    )
    summary_mode: Literal["auto", "transcript", "digest"] = Field(
        "auto",
        description=(
            "what an LLM summarizer reads: `transcript` (the whole history, in chunks), "
            "`digest` (the service's notes on it, within 30% of its tokens: for small local "
            "models), `auto` (digest for `openai` on a loopback address, else transcript)"
        ),
    )
    log_rejected_summaries: bool = Field(
        False,
        description=(
            "log the first line (120 characters) of each LLM answer the summary check "
            "rejects; off by default: it may quote the history"
        ),
    )
    readyz_requires_summarizer: bool = Field(
        False,
        description=(
            "`/readyz` answers 503 while the `openai` summarizer's server does not answer "
            "`GET /models` (always reported as `summarizer_reachable`)"
        ),
    )
    summary_model: str = Field(
        "claude-sonnet-4-5",
        description="model of the summary call (set it for `openai`, e.g. `qwen2.5-coder:32b`)",
    )
    place(vars(), "max_summary_words", "ledger_budget")
    ledger_share: float = Field(
        0.05, gt=0, le=0.5, description="the ledger's budget as a share of the context window"
    )
    ledger_min_tokens: int = Field(1000, ge=0, description="the ledger's budget, at least")
    ledger_max_tokens: int = Field(20_000, ge=0, description="the ledger's budget, at most")
    summary_max_tokens: int = Field(4096, gt=0, description="`max_tokens` of the summary call")
    summary_temperature: float = Field(
        0.0,
        ge=0,
        le=2,
        description="`temperature` of the summary call (0: the most likely answer, each time)",
    )
    summary_timeout: float = Field(60.0, gt=0, description="seconds per attempt")
    summary_attempts: int = Field(
        3, ge=1, le=10, description="attempts in all (retries on timeouts, 429, 5xx)"
    )
    summary_deadline: float = Field(120.0, gt=0, description="seconds for all attempts together")
    summary_server_window: int | None = Field(
        None,
        gt=0,
        description=(
            "`openai`: the context window of the summarizer's server in its own tokens, for "
            "a server that reports none (llama-cpp-python: its `--n_ctx`; Ollama without "
            "`num_ctx` in the Modelfile: its default context length); a reported window wins"
        ),
    )
    place(
        vars(),
        "summary_input_budget",
        "selective_keep_recent",
        "selective_tool_call_threshold",
        "selective_tool_result_threshold",
        "selective_preview_tokens",
        "selective_fallback_to_summary",
    )
    anthropic_api_key: SecretStr | None = Field(
        None,
        description=(
            "the Anthropic key for this service: `auto` then summarizes with Anthropic; "
            "never logged, archived or returned"
        ),
    )
    sdk_anthropic_api_key: SecretStr | None = Field(
        None,
        validation_alias="ANTHROPIC_API_KEY",
        description=(
            "the Anthropic SDK's own variable: used only when `COMPACT_SUMMARIZER=anthropic` "
            "(or a `/count` with `tokenizer: anthropic`) asks for Anthropic and "
            "`COMPACT_ANTHROPIC_API_KEY` is unset; never logged"
        ),
    )
    anthropic_base_url: str | None = Field(
        None,
        validation_alias=AliasChoices("COMPACT_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL"),
        description="Anthropic-compatible endpoint",
    )
    openai_base_url: str = Field(
        "http://127.0.0.1:11434/v1",
        validation_alias=AliasChoices("COMPACT_OPENAI_BASE_URL", "OPENAI_BASE_URL"),
        description=(
            "OpenAI-compatible server up to `/v1` (default: a local Ollama); POSTs go to "
            "`{base}/chat/completions`"
        ),
    )
    openai_api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("COMPACT_OPENAI_API_KEY", "OPENAI_API_KEY"),
        description=("sent as `Authorization: Bearer`; local servers need none; never logged"),
    )
    count_model: str = Field(
        "claude-sonnet-4-5",
        description='model named to Anthropic\'s count_tokens (`tokenizer: "anthropic"`)',
    )
    count_timeout: float = Field(
        10.0, gt=0, description="seconds for that call (one attempt, no retries)"
    )
    max_request_bytes: int = Field(32 * 1024 * 1024, gt=0, description="larger bodies get 413")
    token_cache_entries: int = Field(
        50_000,
        ge=0,
        description=(
            "token counts of recent messages kept (LRU keyed by a hash of each "
            "message's text, ~150 bytes an entry), and as many counted messages "
            "remembered by their JSON; `0` disables both"
        ),
    )
    job_workers: int = Field(4, ge=1, description="background compactions that run at once")
    job_queue_limit: int = Field(
        64, ge=0, description="background compactions that may wait for a worker (`503` above)"
    )
    job_ttl_seconds: float = Field(
        3600.0, gt=0, description="a finished background compaction is kept this long, then deleted"
    )
    job_lease_seconds: float = Field(
        30.0,
        gt=0,
        description=(
            "a replica renews the lease of each job it runs every third of this; a job "
            "whose lease ran out (its replica died) is reported `failed: interrupted` by any "
            "replica sharing the data directory, or taken over and finished by another "
            "replica with `COMPACT_DATABASE_URL`"
        ),
    )
