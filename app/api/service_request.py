"""The service's request for a compacting body: one mapping for `/compact`,
`/compactions` and the command line, the provider request's fields included
(app/api/provider.py says how they are read)."""

from __future__ import annotations

from dataclasses import replace

from app.api.provider import counting_for, system_messages
from app.api.schemas import CompactRequestBody
from app.core.messages import Message
from app.core.provider import OpenAIForms, ProviderRequest
from app.core.vocabulary import Format
from app.service.compaction import CompactionService, CompactRequest


async def service_request(
    body: CompactRequestBody,
    fmt: Format,
    messages: list[Message],
    forms: OpenAIForms,
    service: CompactionService,
    beta_header: str | None = None,
) -> CompactRequest:
    """The service's request for a compacting body whose `messages` were read in `fmt`
    (one mapping for `/compact`, `/compactions` and the command line): a top-level
    `system` at the head, the limits and tokenizer from the `model` (its 1M window with
    the `context-1m` beta, in the body's `betas` or `beta_header`), the output the request
    reserves, the tools counted, and the provider request to hand back when the body was one."""
    counting = counting_for(
        body.model,
        body.tokenizer,
        service.models,
        window_given=body.options.context_window is not None,
        needs_window=True,
        betas=body.betas(beta_header),
    )
    system = system_messages(body)
    tool_tokens = await service.count_tools(body.tools or [], counting.tokenizer)
    request = body.request([*system, *messages], fmt, forms, counting, tool_tokens)
    if not body.from_provider:
        return request
    return replace(request, provider=ProviderRequest(body.provider_request(), head=len(system)))
