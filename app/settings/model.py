"""Server configuration: environment variables with the prefix `COMPACT_`.

Every option has a working default, so zero configuration runs: the extractive summarizer,
the current directory as work directory and `./data` for archives. The container image sets
`COMPACT_WORKDIR=/workspace` and `COMPACT_DATA_DIR=/data`. No paid call is made unless this
service is configured for it: `auto` picks the Anthropic summarizer only for a key under our
own prefix (`COMPACT_ANTHROPIC_API_KEY`); the SDK's `ANTHROPIC_API_KEY`, exported in nearly
every agent developer's shell, is used only once `COMPACT_SUMMARIZER=anthropic` asks for it.
The base URLs and the OpenAI key are also read from the SDKs' own names.

`Settings` names each setting on one line, in the configuration table's order, declared in
the module of its subject (`storage`, `counting`, `summaries`, `providers`, `jobs`,
`toolkit`, `limits`, `serving`, `proxy`). The settings declared beside a request model's fields
(`CompactOptions`, `ToolResultLimits`) are one field each, `options` and `tool_results`
(app/settings/declared.py reads them); `SHOWN_AFTER` places some of them elsewhere in the
table. A renamed setting is still read under its former names (deprecated); the same setting
given under two of its names with different values is refused at start-up.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import SecretStr, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from app.core.options import CompactOptions, DecideParams, P, resolve_params
from app.core.toolkit import ToolResultLimits
from app.settings import (
    counting,
    jobs,
    limits,
    providers,
    proxy,
    serving,
    storage,
    summaries,
    toolkit,
)
from app.settings.declared import Declared, DeclaredSource
from app.settings.sources import ENV_PREFIX, is_loopback

__all__ = ["ENV_PREFIX", "SHOWN_AFTER", "Settings"]

# Where a setting declared beside a request model's field shows in the configuration table
# when not beside the others of its model (the `options` and `tool_results` fields below):
# right after the setting named, in this order.
SHOWN_AFTER: dict[str, tuple[str, ...]] = {
    "database_tcp_user_timeout": ("context_window", "threshold"),
    "models": (
        "min_messages",
        "max_restore_files",
        "max_restore_tokens_per_file",
        "max_restore_tokens_total",
        "read_tools",
    ),
    "summary_model": ("max_summary_words", "ledger_budget"),
    "summary_server_window": (
        "summary_input_budget",
        "selective_keep_recent",
        "selective_tool_call_threshold",
        "selective_tool_result_threshold",
        "selective_preview_tokens",
        "selective_fallback_to_summary",
    ),
    "api_token": (
        "tail_keep_recent_rounds",
        "prune_keep_recent",
        "prune_exclude_tools",
        "prune_min_tokens",
        "prune_clear_inputs",
        "max_iterations",
    ),
}


# Fields only, and no docstring: a class docstring would become a schema description.
class Settings(BaseSettings):
    # `validate_by_name`: a field with aliases (the SDKs' names) is still set by its name.
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="ignore", frozen=True, validate_by_name=True
    )

    workdir: storage.Workdir
    workdir_aliases: storage.WorkdirAliases
    data_dir: storage.DataDir
    database_url: storage.DatabaseUrl
    database_pool_min: storage.DatabasePoolMin
    database_pool_max: storage.DatabasePoolMax
    database_pool_wait: storage.DatabasePoolWait
    database_connect_timeout: storage.DatabaseConnectTimeout
    database_statement_timeout: storage.DatabaseStatementTimeout
    database_call_timeout: storage.DatabaseCallTimeout
    database_keepalives_idle: storage.DatabaseKeepalivesIdle
    database_keepalives_interval: storage.DatabaseKeepalivesInterval
    database_keepalives_count: storage.DatabaseKeepalivesCount
    database_tcp_user_timeout: storage.DatabaseTcpUserTimeout
    overflow_threshold: counting.OverflowThreshold
    models: counting.Models
    summarizer: summaries.Summarizer
    summary_fallback: summaries.SummaryFallback
    summary_mode: summaries.SummaryMode
    log_rejected_summaries: summaries.LogRejectedSummaries
    readyz_requires_summarizer: summaries.ReadyzRequiresSummarizer
    summary_model: summaries.SummaryModel
    ledger_share: summaries.LedgerShare
    ledger_min_tokens: summaries.LedgerMinTokens
    ledger_max_tokens: summaries.LedgerMaxTokens
    summary_max_tokens: summaries.SummaryMaxTokens
    summary_temperature: summaries.SummaryTemperature
    summary_timeout: summaries.SummaryTimeout
    summary_attempts: summaries.SummaryAttempts
    summary_deadline: summaries.SummaryDeadline
    summary_server_window: summaries.SummaryServerWindow
    anthropic_api_key: providers.AnthropicApiKey
    sdk_anthropic_api_key: providers.SdkAnthropicApiKey
    anthropic_base_url: providers.AnthropicBaseUrl
    openai_base_url: providers.OpenaiBaseUrl
    openai_api_key: providers.OpenaiApiKey
    count_model: counting.CountModel
    count_timeout: counting.CountTimeout
    max_request_bytes: limits.MaxRequestBytes
    token_cache_entries: counting.TokenCacheEntries
    job_workers: jobs.JobWorkers
    job_queue_limit: jobs.JobQueueLimit
    job_ttl_seconds: jobs.JobTtlSeconds
    job_lease_seconds: jobs.JobLeaseSeconds
    tool_results: Declared[ToolResultLimits]
    mention_limit: toolkit.MentionLimit
    project_rules_max_bytes: toolkit.ProjectRulesMaxBytes
    max_messages: limits.MaxMessages
    max_blocks: limits.MaxBlocks
    max_depth: limits.MaxDepth
    request_timeout: limits.RequestTimeout
    max_concurrent_summaries: summaries.MaxConcurrentSummaries
    summary_slot_wait: summaries.SummarySlotWait
    recall_slots: limits.RecallSlots
    recall_slot_wait: limits.RecallSlotWait
    api_token: limits.ApiToken
    summary_cooldown_seconds: summaries.SummaryCooldownSeconds
    min_free_bytes: storage.MinFreeBytes
    temp_sweep_seconds: storage.TempSweepSeconds
    retention: storage.Retention
    retention_sweep_seconds: storage.RetentionSweepSeconds
    host: serving.Host
    port: serving.Port
    max_header_bytes: serving.MaxHeaderBytes
    header_timeout: serving.HeaderTimeout
    keep_alive_timeout: serving.KeepAliveTimeout
    log_level: serving.LogLevel
    log_format: serving.LogFormat
    proxy_port: proxy.ProxyPort
    proxy_host: proxy.ProxyHost
    proxy_anthropic_url: proxy.ProxyAnthropicUrl
    proxy_openai_url: proxy.ProxyOpenaiUrl
    proxy_upstreams: proxy.ProxyUpstreams
    proxy_token: proxy.ProxyToken
    proxy_start: proxy.ProxyStart
    proxy_splice: proxy.ProxySplice
    proxy_wait_seconds: proxy.ProxyWaitSeconds
    proxy_pin: proxy.ProxyPin
    options: Declared[CompactOptions]  # its settings not shown after another come last

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        declared = DeclaredSource(settings_cls, init_settings, env_settings, dotenv_settings)
        return init_settings, declared, env_settings, dotenv_settings, file_secret_settings

    @model_validator(mode="after")
    def _overflow_above_threshold(self) -> Settings:
        if self.overflow_threshold < self.server(DecideParams).threshold:
            raise ValueError("COMPACT_OVERFLOW_THRESHOLD must be >= COMPACT_THRESHOLD")
        if self.proxy_splice < self.proxy_start:
            raise ValueError("COMPACT_PROXY_SPLICE must be >= COMPACT_PROXY_START")
        if self.proxy_port is not None and self.proxy_port == self.port:
            raise ValueError("COMPACT_PROXY_PORT must differ from COMPACT_PORT")
        if self.ledger_max_tokens < self.ledger_min_tokens:
            raise ValueError("COMPACT_LEDGER_MAX_TOKENS must be >= COMPACT_LEDGER_MIN_TOKENS")
        return self

    def server(self, kind: type[P]) -> P:
        """A parameters record of the server's options (`options`), as a request that sets
        none of them reads it."""
        return resolve_params(kind, _NO_REQUEST, self.options)

    @property
    def anthropic_key(self) -> SecretStr | None:
        """The key an explicit request for Anthropic uses: ours first, then the SDK's."""
        return self.anthropic_api_key or self.sdk_anthropic_api_key

    @property
    def local_server(self) -> bool:
        """The `openai` summarizer's server is on this machine (a local model, likely on a
        CPU)."""
        return is_loopback(urlsplit(self.openai_base_url).hostname or "")

    @property
    def summary_path(self) -> Literal["transcript", "digest"]:
        """`summary_mode` resolved: `auto` gives the digest to an OpenAI-compatible server
        on a loopback address (a local model, likely small and on a CPU) and the whole
        transcript to every other (hosted models summarize a transcript better)."""
        if self.summary_mode != "auto":
            return self.summary_mode
        local = self.summarizer_kind == "openai" and self.local_server
        return "digest" if local else "transcript"

    @property
    def summarizer_kind(self) -> Literal["extractive", "anthropic", "openai"]:
        """`auto` turns on the paid summarizer only for a key under our own prefix."""
        if self.summarizer == "auto":
            return "anthropic" if self.anthropic_api_key else "extractive"
        return self.summarizer


_NO_REQUEST = CompactOptions()
