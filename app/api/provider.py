"""The provider request as the agent's SDK sends it, taken by the counting and compacting
routes beside the service's own fields.

An Anthropic Messages request carries its system prompt in a top-level `system` (a string
or text blocks); an OpenAI Chat Completions request carries it as system or developer
messages. Both carry `model`, `tools` and fields of their own (`max_tokens`, `thinking`,
`response_format`, ...): those are accepted when they are a provider's (`PROVIDER_FIELDS`,
checked against both SDKs' request types by the tests) and handed back untouched; any other
unknown field is still refused, so a misspelt option of ours is not silently ignored.

A top-level `system` is read as a system message at the head of the canonical list (the
pipeline keeps the head as it is) and put back where it was in the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from app.core.decide import Basis
from app.core.messages import Message
from app.core.model_table import ModelSpec, with_margin
from app.core.provider import (
    OutputBudget,
    closest_names,
    detect_format,
    find_model,
    output_budget,
    parse_messages,
)
from app.core.vocabulary import Format, RequestFormat, TokenizerName
from app.service.answers import Count
from app.service.counting import CountingService

ANTHROPIC_FIELDS = frozenset(
    {
        "betas", "cache_control", "container", "context_management", "diagnostics",
        "fallback_credit_token", "fallbacks", "inference_geo", "max_tokens", "mcp_servers",
        "metadata", "output_config", "output_format", "service_tier", "speed",
        "stop_sequences", "stream", "temperature", "thinking", "tool_choice", "top_k",
        "top_p", "user_profile_id",
    }
)  # fmt: skip
OPENAI_FIELDS = frozenset(
    {
        "audio", "frequency_penalty", "function_call", "functions", "logit_bias",
        "logprobs", "max_completion_tokens", "max_tokens", "metadata", "modalities",
        "moderation", "n", "parallel_tool_calls", "prediction", "presence_penalty",
        "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention",
        "reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier",
        "stop", "store", "stream", "stream_options", "temperature", "tool_choice", "top_logprobs",
        "top_p", "user", "verbosity", "web_search_options",
    }
)  # fmt: skip
PROVIDER_FIELDS = ANTHROPIC_FIELDS | OPENAI_FIELDS
"""The request fields of both APIs besides `model`, `messages`, `system` and `tools`."""

SYSTEM_ITEMS: dict[str, Any] = {
    "anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"$ref": "#/components/schemas/TextBlock"}},
    ]
}


class ProviderFields(BaseModel):
    """The provider request's own fields, beside the service's."""

    model_config = ConfigDict(extra="allow")
    _sent_order: tuple[str, ...] = PrivateAttr(default=())
    model: str | None = Field(
        None,
        min_length=1,
        description=(
            "The provider's model: gives the context window and the tokenizer from the "
            "model table (docs/models.md). Unknown models need `context_window`."
        ),
        examples=["claude-sonnet-4-5", "gpt-4o"],
    )
    system: str | list[dict[str, Any]] | None = Field(
        None,
        description=(
            "Anthropic's top-level system prompt (a string or text blocks): counted, kept, "
            "and handed back in `request.system` as sent."
        ),
        json_schema_extra={"anyOf": SYSTEM_ITEMS["anyOf"]},
    )
    tools: list[dict[str, Any]] | None = Field(
        None,
        description=(
            "Tool definitions in either provider's shape: counted (their compact JSON, an "
            "approximation of what the provider bills) and handed back untouched."
        ),
    )

    @model_validator(mode="wrap")
    @classmethod
    def _provider_extras_only(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        """Unknown fields that are no provider's are refused, named beside any other error."""
        known = set(cls.model_fields) | PROVIDER_FIELDS
        unknown = [
            InitErrorDetails(type="extra_forbidden", loc=(key,), input=value)
            for key, value in (data.items() if isinstance(data, dict) else ())
            if key not in known
        ]
        try:
            model = handler(data)
        except ValidationError as exc:
            if not unknown:
                raise
            raise ValidationError.from_exception_data(
                cls.__name__, [*map(_again, exc.errors(include_url=False)), *unknown]
            ) from None
        if unknown:
            raise ValidationError.from_exception_data(cls.__name__, unknown)
        if isinstance(data, dict):
            model._sent_order = tuple(data)
        return model

    def provider_request(self) -> dict[str, Any]:
        """The fields handed back in `request`, as sent and in the order sent; `messages`
        holds its place as None (the caller puts the compacted list there: the SDKs send
        it among the others, Anthropic's second)."""
        extra = self.model_extra or {}
        own = {n for n in ("model", "system", "tools") if n in self.model_fields_set}
        order = self._sent_order or (*own, *extra)
        return {
            k: None if k == "messages" else getattr(self, k) if k in own else extra[k]
            for k in order
            if k in own or k in extra or k == "messages"
        }

    def output_budget(self) -> OutputBudget:
        """The output the request reserves (`max_tokens`, `max_completion_tokens`,
        `max_output_tokens`): the decision leaves it room in the window."""
        return output_budget(self.model_extra or {})

    def betas(self, header: str | None = None) -> frozenset[str]:
        """Anthropic betas the request turns on: the body's `betas` (as the SDK's
        `beta.messages.create` takes them) and an `anthropic-beta` header (comma-separated,
        as the SDK sends them to the provider) on the request to us."""
        sent = (self.model_extra or {}).get("betas")
        named = [b for b in sent if isinstance(b, str)] if isinstance(sent, list) else []
        named += (header or "").split(",")
        return frozenset(b.strip() for b in named if b.strip())

    @property
    def from_provider(self) -> bool:
        """Whether the body carries any provider field: then the answer holds `request`."""
        sent = self.model_fields_set & {"model", "system", "tools"}
        return bool(sent or self.model_extra)


def _again(error: ErrorDetails) -> InitErrorDetails:
    """One of pydantic's errors, raised again with its type, place and message."""
    return InitErrorDetails(
        type=PydanticCustomError(error["type"], error["msg"]),
        loc=error["loc"],
        input=error["input"],
    )


def format_for(body: ProviderFields, raw: list[dict[str, Any]], requested: RequestFormat) -> Format:
    """The format of a body: a top-level `system` is Anthropic's, tools with a `function`
    are OpenAI's, else as the messages read (`detect_format`)."""
    if body.system is not None:
        if requested == "openai":
            raise invalid(
                "system", "`system` is Anthropic's field: OpenAI carries it as a system message"
            )
        return "anthropic"
    if requested != "auto":
        return requested
    if any(isinstance(t, dict) and "function" in t for t in body.tools or ()):
        return "openai"
    return detect_format(raw)


def system_messages(body: ProviderFields) -> list[Message]:
    """The top-level `system` as the canonical list's head ([] without one)."""
    if body.system is None:
        return []
    try:
        return parse_messages([{"role": "system", "content": body.system}], "anthropic")
    except ValidationError as exc:
        raise RequestFieldError(
            [{**e, "loc": ("body", "system", *e["loc"][2:])} for e in exc.errors()]
        ) from None


class RequestFieldError(ValueError):
    """Fields of a request that do not fit together, located as pydantic locates its
    errors (`("body", "model")`); the API answers them as it answers those (422
    `invalid_request`). Framework-free, so the command line imports this module cheaply."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__("; ".join(str(e.get("msg")) for e in errors))
        self.errors = errors


def invalid(field: str, message: str) -> RequestFieldError:
    """A 422 `invalid_request` naming one top-level field, as pydantic's own errors do."""
    return RequestFieldError([{"type": "value_error", "loc": ("body", field), "msg": message}])


@dataclass(frozen=True)
class Counting:
    """How a request is counted: from `model` through the table, or as the caller says."""

    tokenizer: TokenizerName
    exact: bool = True
    margin: float = 0.0
    context_window: int | None = None
    warnings: tuple[str, ...] = ()
    input_limit: int | None = None
    output_limit: int | None = None

    def output_warnings(self, output: OutputBudget) -> tuple[str, ...]:
        """A warning when the request asks for more output than the model gives."""
        if self.output_limit is None or output.tokens <= self.output_limit:
            return ()
        return (
            f"{output.field} {output.tokens} is over the model's maximum output of "
            f"{self.output_limit}: the provider refuses it",
        )


def counting_for(
    model: str | None,
    tokenizer: TokenizerName | None,
    table: Mapping[str, ModelSpec],
    *,
    window_given: bool,
    needs_window: bool,
    betas: frozenset[str] = frozenset(),
) -> Counting:
    """The counting of a request. An unknown model is a 422 naming `model` (and the closest
    known names) where a window is needed and none is given; elsewhere it is counted with
    cl100k, not exact, with a warning. `betas`: Anthropic's `context-1m` opens the 1M
    window of the models that take it."""
    if model is None:
        return Counting(tokenizer or "tiktoken")
    spec = find_model(model, table)
    if spec is None:
        if needs_window and not window_given:
            close = closest_names(model, table)
            hint = f" (closest known: {', '.join(close)})" if close else ""
            raise invalid(
                "model",
                f"unknown model {model!r}{hint}: give `context_window`, or add the model "
                "to COMPACT_MODELS (docs/models.md)",
            )
        warning = f"unknown model {model!r}: counted with cl100k, not exact"
        return Counting(tokenizer or "tiktoken", exact=False, warnings=(warning,))
    chosen = tokenizer or spec.tokenizer
    return Counting(
        chosen,
        exact=spec.exact and chosen == spec.tokenizer,
        margin=spec.margin,
        context_window=spec.window(betas),
        input_limit=spec.input_limit,
        output_limit=spec.output_limit,
    )


class TokenParts(BaseModel):
    """The count split as the provider bills a request: the system prompt (top-level or
    system/developer messages), the tool definitions and the other messages."""

    system: int
    tools: int
    messages: int


async def count_parts(
    service: CountingService, messages: Sequence[Message], tokenizer: TokenizerName
) -> tuple[Count, int | None]:
    """The count of canonical `messages` (a top-level system at their head) and of their
    system messages alone; None for the latter when the provider counted all in one call."""
    if tokenizer == "anthropic":
        return await service.count_with(messages, tokenizer), None
    each, by = await service.count_each_by(messages, tokenizer)
    system = sum(n for n, m in zip(each, messages, strict=True) if m.role == "system")
    return replace(by, token_count=sum(each)), system


def parts_of(judged: Count, system_tokens: int | None, basis: Basis) -> TokenParts | None:
    """The judged count split as the provider bills it; None when one call counted all."""
    if system_tokens is None:
        return None
    system = with_margin(system_tokens, basis.margin)
    tools = basis.fixed_tokens
    return TokenParts(system=system, tools=tools, messages=judged.token_count - system - tools)
