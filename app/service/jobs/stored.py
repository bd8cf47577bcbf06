"""What a job stores of its request (with a `JobQueue`), so another replica can run it
again from the start."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from app.core.decide import Basis
from app.core.messages import Message, dump_messages
from app.core.options import CompactOptions
from app.core.provider import OutputBudget, ProviderRequest
from app.core.vocabulary import TokenizerName
from app.service.jobs.errors import JsonDict
from app.service.prepared import CompactRequest

_MESSAGES = TypeAdapter(list[Message])


def request_to_json(request: CompactRequest) -> JsonDict:
    """What a job stores of its request, so another replica can run it again."""
    return {
        "messages": dump_messages(request.messages),
        "options": request.options.model_dump(mode="json", exclude_unset=True),
        "session_id": request.session_id,
        "force": request.force,
        "instructions": request.instructions,
        "format": request.format,
        "reason": request.reason,
        "provider": (
            {"fields": dict(request.provider.fields), "head": request.provider.head}
            if request.provider is not None
            else None
        ),
        "basis": {
            "usage": dict(request.basis.usage) if request.basis.usage is not None else None,
            "pending_input": request.basis.pending_input,
            "tokenizer": request.basis.tokenizer,
            "exact": request.basis.exact,
            "margin": request.basis.margin,
            "fixed_tokens": request.basis.fixed_tokens,
        },
        "input_limit": request.input_limit,
        "output": {"tokens": request.output.tokens, "field": request.output.field},
    }


def _output_from_json(data: Any) -> OutputBudget:
    """The stored output budget; none for a request stored before it existed."""
    if not isinstance(data, dict):
        return OutputBudget()
    field = data.get("field")
    return OutputBudget(int(data.get("tokens") or 0), field if isinstance(field, str) else None)


def _basis_from_json(data: JsonDict) -> Basis:
    """The stored threshold basis; a request stored before it existed counts as it did."""
    usage = data.get("usage")
    stored = data.get("tokenizer")
    tokenizer: TokenizerName = stored if stored in ("anthropic", "o200k") else "tiktoken"
    return Basis(
        usage=dict(usage) if isinstance(usage, dict) else None,
        pending_input=data.get("pending_input"),
        tokenizer=tokenizer,
        exact=data.get("exact") is not False,
        margin=float(data.get("margin") or 0.0),
        fixed_tokens=int(data.get("fixed_tokens") or 0),
    )


def _provider_from_json(data: Any) -> ProviderRequest | None:
    if not isinstance(data, dict):
        return None
    return ProviderRequest(fields=dict(data.get("fields") or {}), head=int(data.get("head") or 0))


def request_from_json(data: JsonDict) -> CompactRequest:
    """Raises `ValueError` for a stored request that is not one."""
    try:
        return CompactRequest(
            messages=_MESSAGES.validate_python(data["messages"]),
            options=CompactOptions.model_validate(data.get("options") or {}),
            session_id=data.get("session_id"),
            force=bool(data.get("force")),
            instructions=data.get("instructions"),
            format=data.get("format") or "anthropic",
            reason=data.get("reason"),
            basis=_basis_from_json(data.get("basis") or {}),
            provider=_provider_from_json(data.get("provider")),
            input_limit=int(limit) if (limit := data.get("input_limit")) else None,
            output=_output_from_json(data.get("output")),
        )
    except (KeyError, TypeError, ValidationError) as exc:
        raise ValueError(f"stored request is unreadable: {exc}") from exc
