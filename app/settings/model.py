"""Server configuration: environment variables with the prefix `COMPACT_`.

Every option has a working default, so zero configuration runs: the extractive summarizer,
the current directory as work directory and `./data` for archives. The container image sets
`COMPACT_WORKDIR=/workspace` and `COMPACT_DATA_DIR=/data`. No paid call is made unless this
service is configured for it: `auto` picks the Anthropic summarizer only for a key under our
own prefix (`COMPACT_ANTHROPIC_API_KEY`); the SDK's `ANTHROPIC_API_KEY`, exported in nearly
every agent developer's shell, is used only once `COMPACT_SUMMARIZER=anthropic` asks for it.
The base URLs and the OpenAI key are also read from the SDKs' own names.

A setting that defaults a request option is declared beside that option (`CompactOptions`,
app/core/options/compact.py) and placed among the others by `place`; the others are declared in
`CompactionSettings` (app/settings/compaction.py: the first rows of the configuration table)
and below (the rest, in order). A renamed setting is still read under its former names
(deprecated); the same setting given under two of its names with different values is refused
at start-up (`FormerNamesAgree`). The helpers live in app/settings/sources.py.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from app.core.restore import read_tools_from
from app.core.summary import DIGEST_PROMPT_TOKENS, DIGEST_SHARE, CallBound
from app.settings.compaction import CompactionSettings
from app.settings.sources import DECLARED, ENV_PREFIX, FormerNamesAgree, is_loopback, place

__all__ = ["DECLARED", "ENV_PREFIX", "Settings"]


class Settings(CompactionSettings):
    # `validate_by_name`: a field with aliases (its former names) is still set by its name.
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="ignore", frozen=True, validate_by_name=True
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        check = FormerNamesAgree(settings_cls, env_settings, dotenv_settings)
        return init_settings, check, env_settings, dotenv_settings, file_secret_settings

    # The toolkit (/compress-tool-result, /preprocess-input, /project-rules, /assemble)
    tool_result_read_lines: int = Field(
        500, ge=1, description="`Read` results: lines kept in history"
    )
    tool_result_grep_matches: int = Field(5, ge=1, description="`Grep` results: matches kept")
    tool_result_glob_hits: int = Field(10, ge=1, description="`Glob` results: paths kept")
    tool_result_ls_entries: int = Field(20, ge=1, description="`LS` results: entries kept")
    tool_result_edit_lines: int = Field(20, ge=1, description="`Edit`/`MultiEdit`: new lines kept")
    tool_result_write_lines: int = Field(50, ge=1, description="`Write`: first lines kept")
    tool_result_bash_stdout_head: int = Field(
        3, ge=0, description="`Bash`: first stdout lines kept"
    )
    tool_result_bash_stdout_tail: int = Field(5, ge=0, description="`Bash`: last stdout lines kept")
    tool_result_bash_stderr_lines: int = Field(
        20, ge=0, description="`Bash`: last stderr lines kept"
    )
    tool_result_todo_items: int = Field(
        3, ge=0, description="`TodoWrite`: in-progress items named in the recap"
    )
    tool_result_fallback_chars: int = Field(
        2000, ge=1, description="other tools: longer results are cut to this many characters"
    )
    mention_limit: int = Field(
        5, ge=0, description='`@file` mentions named in reminders, then "(and N more…)"'
    )
    project_rules_max_bytes: int = Field(
        256 * 1024,
        gt=0,
        description="a larger `CODE_LAW.md` is not injected (`skipped: too_large`)",
    )
    # Hardening: request limits, a deadline, a bound on summaries, optional auth.
    max_messages: int = Field(
        10_000, gt=0, description="more messages in one request get 422 `too_many_messages`"
    )
    max_blocks: int = Field(
        50_000,
        gt=0,
        description=(
            "more content blocks and tool calls in one request, all messages together, "
            "get 422 `too_many_blocks`"
        ),
    )
    max_depth: int = Field(
        64,
        ge=8,  # a content block already sits at level 5: body, messages, message, content
        le=512,
        description="deeper JSON nesting gets 422 `too_deep`",
    )
    request_timeout: float = Field(
        300.0,
        gt=0,
        description=(
            "seconds a request may take, upload included (504 `deadline_exceeded` after); "
            "not `/healthz`, `/readyz`, `/metrics`"
        ),
    )
    max_concurrent_summaries: int = Field(
        64,
        ge=1,
        description=(
            "compactions summarizing at once, `/compact` and background jobs together; "
            "a bound on memory and on the LLM's load, not on throughput (the calls wait on "
            "the network)"
        ),
    )
    summary_slot_wait: float = Field(
        1.0,
        ge=0,
        description=(
            "seconds a `/compact` waits for a free slot before 503 `busy` with `Retry-After` "
            "(`0`: at once); jobs wait as long as it takes"
        ),
    )
    recall_slots: int = Field(
        4,
        ge=1,
        description=(
            "recalls searching at once, each on a thread of its own pool, so recalls never "
            "take the threads of the other routes"
        ),
    )
    recall_slot_wait: float = Field(
        1.0,
        ge=0,
        description="seconds a recall waits for a free slot before 503 `busy` with `Retry-After`",
    )
    api_token: SecretStr | None = Field(
        None,
        description=(
            "when set, every route but `/healthz`, `/readyz`, `/metrics` and the docs "
            "(`/docs`, `/redoc`, `/openapi.json`) needs `Authorization: Bearer <token>` "
            "(401 otherwise); never logged"
        ),
    )
    # The `tail` and `prune` strategies and the session limits read from its records.
    place(
        vars(),
        "tail_keep_recent_rounds",
        "prune_keep_recent",
        "prune_exclude_tools",
        "prune_min_tokens",
        "prune_clear_inputs",
        "max_iterations",
    )
    summary_cooldown_seconds: float = Field(
        300.0,
        ge=0,
        description=(
            "after a failed summary in a session, summarizing strategies run `prune` instead "
            "for this long (`0` disables)"
        ),
    )
    # The data directory's health: room left, and crash debris swept.
    min_free_bytes: int = Field(
        64 * 1024 * 1024,
        ge=0,
        description=(
            "`/readyz` answers 503 when the data directory's file system has fewer free "
            "bytes than this (`0`: not checked)"
        ),
    )
    temp_sweep_seconds: float = Field(
        600.0,
        ge=0,
        description=(
            "every this many seconds, temp files of killed writes older than an hour are "
            "deleted in every directory of the data directory (`0`: at start-up only)"
        ),
    )
    host: str = Field("127.0.0.1", description="where `context-compact serve` listens")
    port: int = Field(8080, gt=0, lt=65536, description="port of `context-compact serve`")
    max_header_bytes: int = Field(
        64 * 1024, ge=1024, description="bytes of a request line and its headers (431 past it)"
    )
    header_timeout: float = Field(
        10.0,
        gt=0,
        description="seconds from connecting (or a request's first byte) to the headers' end",
    )
    keep_alive_timeout: int = Field(5, ge=1, description="seconds an idle connection stays open")
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info", description="`debug`, `info`, `warning`, `error`"
    )
    log_format: Literal["json", "text"] = Field(
        "json",
        description=(
            "`json`: one JSON object a line (time, level, logger, message, request_id, "
            "fields); `text`: one readable line with the same fields as `key=value`; never "
            "message contents either way"
        ),
    )

    place(vars(), placed=CompactionSettings.model_fields)  # the rest, last

    @field_validator("workdir_aliases", "read_tools", "prune_exclude_tools", mode="before")
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
        values = vars(self)  # the declared settings have no attribute mypy knows
        if self.overflow_threshold < values["threshold"]:
            raise ValueError("COMPACT_OVERFLOW_THRESHOLD must be >= COMPACT_THRESHOLD")
        if self.ledger_max_tokens < self.ledger_min_tokens:
            raise ValueError("COMPACT_LEDGER_MAX_TOKENS must be >= COMPACT_LEDGER_MIN_TOKENS")
        return self

    @property
    def anthropic_key(self) -> SecretStr | None:
        """The key an explicit request for Anthropic uses: ours first, then the SDK's."""
        return self.anthropic_api_key or self.sdk_anthropic_api_key

    @property
    def local_call_bound(self) -> CallBound | None:
        """The largest summary call and the time it gets, for an OpenAI-compatible server on
        a loopback address (a local model, likely on a CPU); None for any other."""
        if self.summarizer_kind != "openai" or not self._local_server:
            return None
        budget = int(vars(self)["summary_input_budget"])  # placed beside the options
        if self.summary_path == "digest":  # the notes, within a share of the window
            window = int(vars(self)["context_window"])
            budget = min(budget, int(DIGEST_SHARE * window) + DIGEST_PROMPT_TOKENS)
        return CallBound(
            input_tokens=budget,
            output_tokens=self.summary_max_tokens,
            timeout=self.summary_timeout,
            attempts=self.summary_attempts,
            deadline=self.summary_deadline,
        )

    @property
    def _local_server(self) -> bool:
        return is_loopback(urlsplit(self.openai_base_url).hostname or "")

    @property
    def summary_path(self) -> Literal["transcript", "digest"]:
        """`summary_mode` resolved: `auto` gives the digest to an OpenAI-compatible server
        on a loopback address (a local model, likely small and on a CPU) and the whole
        transcript to every other (hosted models summarize a transcript better)."""
        if self.summary_mode != "auto":
            return self.summary_mode
        local = self.summarizer_kind == "openai" and self._local_server
        return "digest" if local else "transcript"

    @property
    def summarizer_kind(self) -> Literal["extractive", "anthropic", "openai"]:
        """`auto` turns on the paid summarizer only for a key under our own prefix."""
        if self.summarizer == "auto":
            return "anthropic" if self.anthropic_api_key else "extractive"
        return self.summarizer
