"""Server configuration: environment variables with the prefix `COMPACT_` (DESIGN §7).

Every option has a working default, so zero configuration runs: the extractive summarizer,
the current directory as work directory and `./data` for archives. The container image sets
`COMPACT_WORKDIR=/workspace` and `COMPACT_DATA_DIR=/data`. The Anthropic key and base URL
are also read from the SDK's own names (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`), and the
OpenAI-compatible server's from `OPENAI_API_KEY` and `OPENAI_BASE_URL`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.core.restore import read_tools_from


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="COMPACT_", extra="ignore", frozen=True)

    workdir: str = Field(".", description="The agent's work directory (read-only for us).")
    workdir_aliases: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description=(
            "Comma-separated absolute paths under which the agent sees the work directory "
            "(e.g. /home/me/project); absolute paths below them map into WORKDIR."
        ),
    )
    data_dir: str = Field("./data", description="Where archives are written.")
    context_window: int = Field(200_000, gt=0, description="Model window in tokens.")
    threshold: float = Field(0.8, gt=0, le=1, description="Compact at this share of the window.")
    overflow_threshold: float = Field(0.9, gt=0, le=1, description="Overflow at this share.")
    min_messages: int = Field(3, ge=0, description="Never compact shorter lists.")
    max_restore_files: int = Field(5, ge=0, description="Files restored after compaction.")
    max_restore_tokens_per_file: int = Field(5000, ge=0, description="Per-file token limit.")
    max_restore_tokens_total: int = Field(50_000, ge=0, description="Total restored tokens.")
    read_tools: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["read_file.path"],
        description=(
            "Comma-separated tool calls that count as file reads: `tool_name.path_field`, "
            "`tool_name.path_field[command=value]`, or preset names (seed000, claude_code, "
            "swe_agent, openhands, mcp_filesystem, all)."
        ),
    )
    summarizer: Literal["auto", "extractive", "anthropic", "openai"] = Field(
        "auto",
        description=(
            "`auto`: anthropic when an Anthropic API key is set, else the built-in "
            "extractive. `openai`: any OpenAI-compatible /chat/completions server."
        ),
    )
    summary_fallback: Literal["none", "extractive"] = Field(
        "none",
        description=(
            "When the LLM summary fails: `none` returns the messages unchanged "
            "(reason summarization_failed); `extractive` summarizes without the LLM."
        ),
    )
    summary_model: str = Field("claude-sonnet-4-5", description="Model for LLM summaries.")
    max_summary_words: int = Field(1200, gt=0, description="Word limit of a summary.")
    ledger_budget: int = Field(
        1500, ge=0, description="Token budget of the fact ledger appended to every summary."
    )
    summary_input_budget: int = Field(
        100_000,
        ge=1000,
        description=(
            "Tokens the summarizer's input (system + prompt) may take; a longer history is "
            "summarized in chunks, each chunk's summary carried into the next."
        ),
    )
    selective_keep_recent: int = Field(
        5, ge=0, description="`selective`: tool blocks, assistant and user messages kept."
    )
    selective_tool_call_threshold: int = Field(
        500, gt=0, description="`selective`: a kept tool call's input over this is cut."
    )
    selective_tool_result_threshold: int = Field(
        600, gt=0, description="`selective`: a kept tool result over this is cut."
    )
    selective_preview_tokens: int = Field(
        200, gt=0, description="`selective`: tokens of a cut input or result that stay."
    )
    selective_fallback_to_summary: bool = Field(
        True, description="`selective`: summarize when the rules leave it over the threshold."
    )
    summary_max_tokens: int = Field(4096, gt=0, description="max_tokens of the summary call.")
    summary_timeout: float = Field(60.0, gt=0, description="Seconds per summarizer attempt.")
    summary_attempts: int = Field(3, ge=1, le=10, description="Summarizer attempts in all.")
    summary_deadline: float = Field(120.0, gt=0, description="Seconds for all attempts.")
    anthropic_api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("COMPACT_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
        description="Anthropic API key (also read from ANTHROPIC_API_KEY). Never logged.",
    )
    anthropic_base_url: str | None = Field(
        None,
        validation_alias=AliasChoices("COMPACT_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL"),
        description="Anthropic-compatible base URL (also read from ANTHROPIC_BASE_URL).",
    )
    openai_base_url: str = Field(
        "http://127.0.0.1:11434/v1",
        validation_alias=AliasChoices("COMPACT_OPENAI_BASE_URL", "OPENAI_BASE_URL"),
        description=(
            "Base URL of the OpenAI-compatible server, up to `/v1` (default: a local Ollama; "
            "also read from OPENAI_BASE_URL)."
        ),
    )
    openai_api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("COMPACT_OPENAI_API_KEY", "OPENAI_API_KEY"),
        description="Bearer key of that server, if it needs one (also OPENAI_API_KEY).",
    )
    count_model: str = Field(
        "claude-sonnet-4-5", description="Model named to Anthropic's count_tokens endpoint."
    )
    count_timeout: float = Field(10.0, gt=0, description="Seconds for a provider count.")
    max_request_bytes: int = Field(
        32 * 1024 * 1024, gt=0, description="Largest accepted request body (413 above)."
    )
    token_cache_entries: int = Field(
        50_000,
        ge=0,
        description="Token counts of recent messages kept (LRU, ~200 bytes each); 0 disables.",
    )
    job_workers: int = Field(4, ge=1, description="Background compactions run at once.")
    job_queue_limit: int = Field(
        64, ge=0, description="Background compactions waiting for a worker (503 above)."
    )
    job_ttl_seconds: float = Field(
        3600.0, gt=0, description="Seconds a finished background compaction is kept."
    )
    host: str = Field("127.0.0.1", description="`python -m app serve` binds here.")
    port: int = Field(8080, gt=0, lt=65536, description="`python -m app serve` listens here.")
    log_level: Literal["debug", "info", "warning", "error"] = Field("info")

    @field_validator("workdir_aliases", "read_tools", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("read_tools")
    @classmethod
    def _read_tools_parse(cls, value: list[str]) -> list[str]:
        read_tools_from(value)
        return value

    @model_validator(mode="after")
    def _overflow_above_threshold(self) -> Settings:
        if self.overflow_threshold < self.threshold:
            raise ValueError("overflow_threshold must be >= threshold")
        return self

    @property
    def summarizer_kind(self) -> Literal["extractive", "anthropic", "openai"]:
        if self.summarizer == "auto":
            return "anthropic" if self.anthropic_api_key else "extractive"
        return self.summarizer
