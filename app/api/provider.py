"""The provider request as the agent's SDK sends it, taken by the counting and compacting
routes beside the service's own fields.

An Anthropic Messages request carries its system prompt in a top-level `system` (a string
or text blocks); an OpenAI Chat Completions request carries it as system or developer
messages; a Responses API request carries its conversation as `input` (a string or items)
and its system prompt as `instructions`. All carry `model`, `tools` and fields of their
own (`max_tokens`, `thinking`, `reasoning`, ...). A field the service does not read is
kept and handed back as sent, in the order sent: the providers add fields every month,
and a drop-in cannot refuse what it does not know. The service's own fields
(`SERVICE_FIELDS`) are read, validated and never handed to the provider.

A top-level `system` (or `instructions`) is read as a system message at the head of the
canonical list (the pipeline keeps the head as it is) and put back where it was in the
answer. In a Responses body `instructions` is the provider's; elsewhere it is the
service's focus for the summary.
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

from app.core.decide import Basis
from app.core.messages import Message
from app.core.model_table import ModelSpec, with_margin
from app.core.provider import (
    OutputBudget,
    ProviderRequest,
    closest_names,
    detect_format,
    find_model,
    output_budget,
    parse_messages,
)
from app.core.vocabulary import Format, RequestFormat, TokenizerName
from app.service.answers import Count
from app.service.counting import CountingService

SERVICE_FIELDS = frozenset(
    {
        "messages", "format", "session_id", "force", "last_usage", "pending_input",
        "tokenizer", "instructions", "options", "reason", "context_window", "threshold",
        "overflow_threshold", "min_messages",
    }
)  # fmt: skip
"""The service's own top-level fields, every route's (one body, every route): read where
a route needs them, never handed back to the provider."""


@dataclass(frozen=True)
class ResponsesBody:
    """What a Responses API body holds besides its items: the order of its fields as sent,
    its `instructions` (the provider's system prompt), and its `input` when a string."""

    order: tuple[str, ...]
    instructions: Any = None
    input_text: str | None = None


def responses_body(data: dict[str, Any]) -> tuple[dict[str, Any], ResponsesBody]:
    """A Responses body as the service reads a body: `input` as `messages` (a string as one
    user message), in the `responses` format, `instructions` set aside."""
    items = data["input"]
    fields = {k: v for k, v in data.items() if k not in ("input", "instructions")}
    fields["messages"] = [{"role": "user", "content": items}] if isinstance(items, str) else items
    if fields.get("format", "auto") == "auto":
        fields["format"] = "responses"
    text = items if isinstance(items, str) else None
    return fields, ResponsesBody(tuple(data), data.get("instructions"), text)


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
    _responses: ResponsesBody | None = PrivateAttr(default=None)
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
            "Tool definitions in any provider's shape: counted (their compact JSON, an "
            "approximation of what the provider bills) and handed back untouched."
        ),
    )
    # Read only where `messages` is absent (a Responses body, `responses_body`): beside
    # `messages` it is a field the service does not read, so no type is imposed on it.
    input: Any = Field(
        None,
        json_schema_extra={
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"$ref": "#/components/schemas/ResponsesItem"}},
            ]
        },
        description=(
            "A Responses API request's conversation, in place of `messages`: a string (one "
            "user message) or its items (`message`, `function_call`, `function_call_output`, "
            "`reasoning`, ...). Its `instructions` are then its system prompt, not a focus "
            "for the summary; the answer's `request` holds `input` where it was sent."
        ),
    )

    @model_validator(mode="wrap")
    @classmethod
    def _as_sent(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        """Any field is taken; the order of the fields sent is kept (a Responses body's
        `input` and `instructions` set aside first: `responses_body`)."""
        responses = None
        if isinstance(data, dict) and "input" in data and "messages" not in data:
            data, responses = responses_body(data)
        model = handler(data)
        if responses is not None:
            model._responses = responses
            model._sent_order = responses.order
        elif isinstance(data, dict):
            model._sent_order = tuple(data)
        return model

    @property
    def messages_key(self) -> str:
        """The field that holds the messages: `input` in a Responses body."""
        return "messages" if self._responses is None else "input"

    def provider_request(self) -> dict[str, Any]:
        """The fields handed back in `request`, as sent and in the order sent; the messages'
        field holds its place as None (the caller puts the compacted list there: the SDKs
        send it among the others, Anthropic's second)."""
        extra = self.model_extra or {}
        own = {n for n in ("model", "system", "tools", "input") if n in self.model_fields_set}
        order = self._sent_order or (*own, *extra)
        key = self.messages_key
        out: dict[str, Any] = {}
        for k in order:
            if k == key:
                out[k] = None
            elif k == "instructions" and self._responses is not None:
                out[k] = self._responses.instructions
            elif k in own:
                out[k] = getattr(self, k)
            elif k in extra and k not in SERVICE_FIELDS:
                out[k] = extra[k]
        return out

    def provider(self, head: int) -> ProviderRequest:
        """The provider request to hand back, its system prompt `head` canonical messages."""
        text = self._responses.input_text if self._responses is not None else None
        return ProviderRequest(self.provider_request(), head, self.messages_key, text)

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
        extra = self.model_extra or {}
        return bool(sent or self._responses or any(k not in SERVICE_FIELDS for k in extra))


def format_for(body: ProviderFields, raw: list[dict[str, Any]], requested: RequestFormat) -> Format:
    """The format of a body: a top-level `system` is Anthropic's, tools with a `function`
    are OpenAI's, else as the messages read (`app.core.provider.detect_format`)."""
    if body._responses is not None:
        if requested != "responses":
            raise invalid("format", "a body with `input` is a Responses API request")
        return "responses"
    if body.system is not None:
        if requested != "anthropic" and requested != "auto":
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
    """The top-level `system` (a Responses body's `instructions`, when a string) as the
    canonical list's head ([] without one)."""
    field, system = "system", body.system
    if body._responses is not None:
        field, system = "instructions", body._responses.instructions
        if not isinstance(system, str) or not system:
            return []
    if system is None:
        return []
    try:
        return parse_messages([{"role": "system", "content": system}], "anthropic")
    except ValidationError as exc:
        raise RequestFieldError(
            [{**e, "loc": ("body", field, *e["loc"][2:])} for e in exc.errors()]
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
