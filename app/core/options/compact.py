"""The options of a compaction (`CompactOptions`), each declared once with its setting.

A pydantic model because the API serves it as it is; in the core because the pipeline
reads it. Option fields left unset take the server's defaults.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from app.core.history import Vocabulary
from app.core.options.declaration import former_name, former_names, setting
from app.core.restore import read_tools_from
from app.core.vocabulary import StrategyName

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class CompactOptions(BaseModel):
    """Per-request overrides of the server's defaults; every field is optional."""

    # The docstring above is the API's description of the model. A field's `setting(...)`
    # declares its server default (`COMPACT_<name>`, read into `Settings.options`) right here.

    model_config = _FROZEN

    # Each strategy says what it does (`description` in app/service/strategies/): the API
    # document lists them under this field (app/api/spec.py).
    strategy: StrategyName = Field("full", description="How to compact.")
    tail_keep_recent_rounds: Annotated[
        int | None,
        setting(
            "tail_keep_recent_rounds",
            10,
            "`tail`: complete rounds kept verbatim, at least",
            formerly=("keep_recent_rounds",),
            ge=1,
        ),
    ] = Field(None, ge=1, le=10_000, description="`tail`: complete rounds kept verbatim, at least.")
    prune_keep_recent: Annotated[
        int | None,
        setting(
            "prune_keep_recent",
            3,
            "`prune`: the most recent tool uses whose results are kept",
            ge=0,
        ),
    ] = Field(
        None, ge=0, le=10_000, description="`prune`: the most recent tool uses left untouched."
    )
    prune_exclude_tools: Annotated[
        list[str] | None,
        setting(
            "prune_exclude_tools",
            description="`prune`: comma-separated tools whose results are never cleared",
            default_factory=list,
        ),
    ] = Field(None, description="`prune`: tools whose results are never cleared.")
    prune_min_tokens: Annotated[
        int | None,
        setting(
            "prune_min_tokens",
            0,
            "`prune`: clear nothing unless it saves at least this many tokens",
            ge=0,
        ),
    ] = Field(
        None, ge=0, description="`prune`: clear nothing unless it saves at least this many tokens."
    )
    prune_clear_inputs: Annotated[
        bool | None,
        setting(
            "prune_clear_inputs",
            False,
            "`prune`: also clear the inputs of the calls whose results go",
        ),
    ] = Field(
        None, description="`prune`: also clear the inputs of the calls whose results are cleared."
    )
    max_iterations: Annotated[
        int | None,
        setting("max_iterations", 0, "successful compactions per session (0: unlimited)", ge=0),
    ] = Field(None, ge=0, description="Successful compactions allowed per session (0: unlimited).")
    context_window: Annotated[
        int | None,
        setting("context_window", 200_000, "model window in tokens", gt=0),
    ] = Field(None, gt=0, description="The model's window in tokens.")
    threshold: Annotated[
        float | None,
        setting("threshold", 0.8, "compact at this share of the window", gt=0, le=1),
    ] = Field(None, gt=0, le=1, description="Compact at this share of the window.")
    min_messages: Annotated[
        int | None,
        setting("min_messages", 3, "never compact shorter lists", ge=0),
    ] = Field(None, ge=0, description="Never compact shorter lists.")
    max_restore_files: Annotated[
        int | None,
        setting("max_restore_files", 5, "files restored after a compaction", ge=0),
    ] = Field(
        None, ge=0, le=100, description="Files re-read after compaction (0 disables restoring)."
    )
    max_restore_tokens_per_file: Annotated[
        int | None,
        setting("max_restore_tokens_per_file", 5000, "a larger file is skipped", ge=0),
    ] = Field(None, ge=0, description="A file over this many tokens is skipped.")
    max_restore_tokens_total: Annotated[
        int | None,
        setting("max_restore_tokens_total", 50_000, "restoration stops before this", ge=0),
    ] = Field(None, ge=0, description="Restoration stops before exceeding this many tokens.")
    ledger_budget: Annotated[
        int | None,
        setting(
            "ledger_budget",
            None,
            "fixed token budget of the fact ledger appended to every summary (0: off); unset: "
            "`ledger_share` of the context window, within `ledger_min_tokens` and "
            "`ledger_max_tokens`",
            optional=True,
            ge=0,
        ),
    ] = Field(
        None,
        ge=0,
        le=100_000,
        description=(
            "Token budget of the fact ledger appended to the summary (0 disables it). Unset: "
            "the server's share of `context_window`, within its floor and cap."
        ),
    )
    file_tools: list[str] | None = Field(
        None,
        description=(
            "Tools that touch files, beside the built-in vocabulary of common agents: "
            "`tool_name.path_field:kind` or `tool_name.path_field[command=value]:kind`, kind "
            "one of read, created, edited, deleted."
        ),
        examples=[["save_note.target:created", "editor.file[command=write]:edited"]],
    )
    max_summary_words: Annotated[
        int | None,
        setting("max_summary_words", 1200, "word limit given to the summarizer", gt=0),
    ] = Field(
        None,
        gt=0,
        le=20000,
        description=(
            "Word limit given to the summarizer. Unset: the server's, lowered for a window "
            "under 32k tokens to about the ledger's share of it (at least 200 words)."
        ),
    )
    read_tools: Annotated[
        list[str] | None,
        setting(
            "read_tools",
            description=(
                "comma-separated tool calls that count as file reads: `tool_name.path_field`, "
                "`tool_name.path_field[command=value]` or preset names, as `read_tools` above "
                "(e.g. `claude_code` or `seed000,mcp_filesystem`)"
            ),
            default_factory=lambda: ["read_file.path"],
            check=read_tools_from,
        ),
    ] = Field(
        None,
        min_length=1,
        description=(
            "Tool calls that count as file reads: `tool_name.path_field`, "
            "`tool_name.path_field[command=value]`, or presets: seed000 (read_file.path), "
            "claude_code (Read.file_path), swe_agent and openhands "
            "(str_replace_editor.path[command=view]), mcp_filesystem (read_text_file.path, "
            "read_file.path), all."
        ),
        examples=[["claude_code"], ["read_file.path", "Read.file_path"]],
    )

    selective_keep_recent: Annotated[
        int | None,
        setting(
            "selective_keep_recent",
            5,
            "`selective`: tool blocks, assistant and user messages kept",
            ge=0,
        ),
    ] = Field(None, ge=0, description="`selective`: tool blocks, assistant and user messages kept.")
    selective_tool_call_threshold: Annotated[
        int | None,
        setting(
            "selective_tool_call_threshold",
            500,
            "`selective`: a kept tool call's input over this many tokens is cut",
            gt=0,
        ),
    ] = Field(None, gt=0, description="`selective`: a kept tool call's input over this is cut.")
    selective_tool_result_threshold: Annotated[
        int | None,
        setting(
            "selective_tool_result_threshold",
            600,
            "`selective`: a kept tool result over this many tokens is cut",
            gt=0,
        ),
    ] = Field(None, gt=0, description="`selective`: a kept tool result over this is cut.")
    selective_preview_tokens: Annotated[
        int | None,
        setting(
            "selective_preview_tokens", 200, "`selective`: tokens a cut input or result keeps", gt=0
        ),
    ] = Field(None, gt=0, description="`selective`: tokens of a cut input or result that stay.")
    selective_fallback_to_summary: Annotated[
        bool | None,
        setting(
            "selective_fallback_to_summary",
            True,
            "`selective`: summarize when the rules leave the list over the threshold",
        ),
    ] = Field(
        None, description="`selective`: summarize when the rules leave it over the threshold."
    )
    fallback: bool | None = Field(
        None,
        description=(
            "Go on to the next strategy when the one asked for declines or does not leave the "
            "context smaller than sent and under the threshold: tail → full, selective → "
            "full, prune → tail → full (default true). Off: that strategy's answer, refused "
            "with `no_gain` when it would not shrink the context below the threshold."
        ),
    )
    summary_input_budget: Annotated[
        int | None,
        setting(
            "summary_input_budget",
            100_000,
            "tokens the summarizer's input (system + prompt) may take; a longer history is "
            "summarized in chunks, each chunk's summary carried into the next (LLM summarizers)",
            ge=1000,
        ),
    ] = Field(
        None,
        ge=1000,
        description=(
            "Tokens the summarizer's input (system + prompt) may take; a longer history is "
            "summarized in chunks, each chunk's summary carried into the next."
        ),
    )

    # Former names of renamed options, still accepted (deprecated): each validates as its
    # option, is folded into it, and may be sent beside it only with the same value.
    keep_recent_rounds: int | None = former_name(vars(), "tail_keep_recent_rounds")
    keep_recent: int | None = former_name(vars(), "selective_keep_recent")
    tool_call_threshold: int | None = former_name(vars(), "selective_tool_call_threshold")
    tool_result_threshold: int | None = former_name(vars(), "selective_tool_result_threshold")
    preview_tokens: int | None = former_name(vars(), "selective_preview_tokens")
    fallback_to_summary: bool | None = former_name(vars(), "selective_fallback_to_summary")

    _former_names_used: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("*")
    @classmethod
    def _former_name_agrees(cls, value: object, info: ValidationInfo) -> object:
        """A former name sent beside its option with another value is refused here, so the
        error names the field the caller sent (the option is declared, and validated,
        before it)."""
        replacement = FORMER_NAMES.get(info.field_name or "")
        current = info.data.get(replacement) if replacement else None
        if value is not None and current is not None and current != value:
            raise PydanticCustomError(
                "former_name_conflict",
                "conflicts with `{replacement}` ({current}), its new name: send "
                "`{replacement}` only",
                {"replacement": replacement, "current": current},
            )
        return value

    @model_validator(mode="after")
    def _former_names_folded(self) -> CompactOptions:
        """A value sent under a former name moves to its option, so everything after
        validation (the resolved options, a stored job's request) has one name per knob;
        which former names came is kept for the answer's warnings. The model is frozen and
        a deprecated field warns when read, so its values are moved in `vars(self)` while
        it is still being built."""
        values = vars(self)
        used = []
        for former, replacement in FORMER_NAMES.items():
            if values[former] is None:
                continue
            used.append(former)
            values[replacement], values[former] = values[former], None
            self.__pydantic_fields_set__.add(replacement)
            self.__pydantic_fields_set__.discard(former)
        self._former_names_used = tuple(used)
        return self

    @property
    def former_names_used(self) -> tuple[str, ...]:
        """The former option names the request was sent with (folded into their options)."""
        return self._former_names_used

    @model_validator(mode="after")
    def _read_tools_parse(self) -> CompactOptions:
        try:
            read_tools_from(self.read_tools or ())
        except ValueError as exc:
            raise ValueError(f"read_tools: {exc}") from None
        try:
            Vocabulary.from_specs(self.file_tools or ())
        except ValueError as exc:
            raise ValueError(f"file_tools: {exc}") from None
        return self


# The request options without a `COMPACT_*` setting, and why; every other option declares
# its setting beside it (`Setting`), and a test holds each option to one or the other.
REQUEST_ONLY: dict[str, str] = {
    "strategy": "the caller chooses the strategy per request; `full` is the API's default",
    "file_tools": (
        "names one agent's own file tools beside the built-in vocabulary, which is the "
        "server's default"
    ),
    "fallback": "the caller chooses per request whether to fall back; default true",
}


# Former name → the option that replaced it (declared above with `former_name`).
FORMER_NAMES: dict[str, str] = former_names(CompactOptions)


def former_name_warnings(options: CompactOptions) -> list[str]:
    """One warning for each former option name a request used, naming its replacement."""
    return [
        f"option `{former}` is deprecated: it is now `{FORMER_NAMES[former]}`"
        for former in options.former_names_used
    ]
