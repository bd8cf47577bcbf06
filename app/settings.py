"""Server configuration: environment variables with the prefix `COMPACT_`.

Every option has a working default, so zero configuration runs: the extractive summarizer,
the current directory as work directory and `./data` for archives. The container image sets
`COMPACT_WORKDIR=/workspace` and `COMPACT_DATA_DIR=/data`. No paid call is made unless this
service is configured for it: `auto` picks the Anthropic summarizer only for a key under our
own prefix (`COMPACT_ANTHROPIC_API_KEY`); the SDK's `ANTHROPIC_API_KEY`, exported in nearly
every agent developer's shell, is used only once `COMPACT_SUMMARIZER=anthropic` asks for it.
The base URLs and the OpenAI key are also read from the SDKs' own names.

A setting that defaults a request option is declared beside that option (`CompactOptions`,
app/core/compaction.py) and placed here by `_place`; the others are declared below. A
renamed setting is still read under its former names (deprecated); the same setting given
under two of its names with different values is refused at start-up (`FormerNamesAgree`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_origin

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import InitErrorDetails, PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from app.core.compaction import CompactOptions
from app.core.models import ModelSpec
from app.core.option_setting import setting_type, settings_of
from app.core.restore import read_tools_from

# The settings declared beside the request options they default (`CompactOptions`):
# setting name → (request field, declaration).
DECLARED = settings_of(CompactOptions)
ENV_PREFIX = "COMPACT_"


def _place(namespace: dict[str, Any], *names: str) -> None:
    """Adds the settings declared beside the request options to the class body being
    built, in the order given (their place in the README's table). With no names: every one
    not placed yet, so a new option's setting needs no line here. `vars()` in a class body
    is the namespace the class is built from (in every CPython, before and after PEP 667),
    so pydantic sees these fields exactly as if they were written out."""
    annotations = namespace.setdefault("__annotations__", {})
    for name in names or [n for n in DECLARED if n not in annotations]:
        request_field, spec = DECLARED[name]
        kind = setting_type(CompactOptions, request_field)
        # A list setting is comma-separated text (`_split_commas`), not JSON.
        annotations[name] = Annotated[kind, NoDecode] if get_origin(kind) is list else kind
        namespace[name] = spec.field(ENV_PREFIX)


class FormerNamesAgree(PydanticBaseSettingsSource):
    """Refuses a renamed setting given under its name and a former name with different
    values: which one was meant cannot be told, so start-up fails naming both. Reads the
    variables as the environment sources saw them (their case rules and empty values)."""

    def __init__(
        self, settings_cls: type[BaseSettings], *sources: PydanticBaseSettingsSource
    ) -> None:
        super().__init__(settings_cls)
        self._sources = [s for s in sources if isinstance(s, EnvSettingsSource)]

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # contributes no values, only the check

    def __call__(self) -> dict[str, Any]:
        errors: list[InitErrorDetails] = []
        for _, spec in DECLARED.values():
            names = spec.env_names(ENV_PREFIX)
            for source in self._sources:
                given = {
                    name: value
                    for name in names
                    if (value := source.env_vars.get(_env_key(source, name))) is not None
                }
                if len(set(given.values())) > 1:
                    shown = ", ".join(f"{name}={value!r}" for name, value in given.items())
                    conflict = PydanticCustomError(
                        "former_name_conflict",
                        "one setting under two names with different values: {shown}; set one",
                        {"shown": shown},
                    )
                    errors.append(
                        InitErrorDetails(
                            type=conflict,
                            loc=(" / ".join(given),),
                            input=given,
                        )
                    )
        if errors:
            raise ValidationError.from_exception_data(self.settings_cls.__name__, errors)
        return {}


def _env_key(source: EnvSettingsSource, name: str) -> str:
    return name if source.case_sensitive else name.lower()


class Settings(BaseSettings):
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
    _place(vars(), "context_window", "threshold")
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
    _place(
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
    summary_model: str = Field(
        "claude-sonnet-4-5",
        description="model of the summary call (set it for `openai`, e.g. `qwen2.5-coder:32b`)",
    )
    _place(vars(), "max_summary_words", "ledger_budget")
    ledger_share: float = Field(
        0.05, gt=0, le=0.5, description="the ledger's budget as a share of the context window"
    )
    ledger_min_tokens: int = Field(1000, ge=0, description="the ledger's budget, at least")
    ledger_max_tokens: int = Field(20_000, ge=0, description="the ledger's budget, at most")
    summary_max_tokens: int = Field(4096, gt=0, description="`max_tokens` of the summary call")
    summary_timeout: float = Field(60.0, gt=0, description="seconds per attempt")
    summary_attempts: int = Field(
        3, ge=1, le=10, description="attempts in all (retries on timeouts, 429, 5xx)"
    )
    summary_deadline: float = Field(120.0, gt=0, description="seconds for all attempts together")
    _place(
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
    _place(
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

    _place(vars())  # the declared settings not placed above, last

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
    def summarizer_kind(self) -> Literal["extractive", "anthropic", "openai"]:
        """`auto` turns on the paid summarizer only for a key under our own prefix."""
        if self.summarizer == "auto":
            return "anthropic" if self.anthropic_api_key else "extractive"
        return self.summarizer
