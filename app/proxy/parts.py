"""A part of a proxied conversation compacted by the service: joined from the old head and
the client's messages as the service reads a history (`joined_part`), put in the service's
own message shape (the system prompt ahead of it, as the pipeline expects it), compacted
with the `full` strategy (archive first, the ledger, restored files), and dumped back in
the request's API shape (for a Responses body, the canonical messages its `input` is read
as: `app.core.proxy.bodies`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from app.core.history import PART_OPENING
from app.core.messages import Message, dump_message
from app.core.options import CompactOptions
from app.core.provider import dump_as, forms_for, parse_messages
from app.core.proxy import JsonDict
from app.proxy.exchange import Exchange
from app.service.compaction import CompactionService, CompactRequest

log = logging.getLogger("context_compact.proxy")
_RULE = re.compile(r"\[([a-z_]+)\]")  # a warning's rule: `summary: dropped [rule] …`

_SYSTEM_ROLES = frozenset({"system", "developer"})
# The archives the compactions of this task wrote, when its caller collects them: one
# cancelled before its head was made is let go all the same (app/proxy/discards.py).
WRITTEN: ContextVar[list[str] | None] = ContextVar("written", default=None)


async def compacted_part(
    service: CompactionService, ex: Exchange, system: list[JsonDict], part: list[JsonDict]
) -> tuple[list[JsonDict], str | None] | None:
    """`part` compacted by the service (the system prompt ahead of it, as the pipeline
    expects it), without the system messages: the messages that replace `part`, and the
    id of the archive the compaction wrote."""
    forms = forms_for(ex.format)
    if ex.format == "openai":
        canonical = parse_messages([*system, *part], "openai", forms)
    elif ex.format == "responses":  # read from `input` by the Responses dialect already
        instructions = _anthropic_system({"system": ex.body.get("instructions")})
        canonical = [*instructions, *(Message.model_validate(m) for m in [*system, *part])]
    else:
        canonical = [*_anthropic_system(ex.body), *parse_messages(part, "anthropic")]
    options = CompactOptions(strategy="full", context_window=ex.limit)
    request = CompactRequest(
        messages=canonical,
        options=options,
        session_id=ex.session_id,
        force=True,
        format=ex.format,
        background=True,
        reason="llm_call",
        forms=forms,
    )
    result = await service.compact(request)
    if not result.compacted:
        log.info("proxy compaction declined", extra={"reason": result.reason})
        return None
    trims = [w for w in result.warnings if w.startswith(("summary", "summarizer"))]
    if trims:  # the gate's drops and refusals by rule: a log line holds no summary text
        rules = [rule.group(1) if (rule := _RULE.search(w)) else "unnamed" for w in trims]
        log.info("proxy compaction summary checked", extra={"rules": rules})
    kept = [m for m in result.messages if m.role != "system"]
    archive = result.archive.id if result.archive else None
    written = WRITTEN.get()
    if written is not None and archive is not None:
        written.append(archive)
    if ex.format == "responses":  # canonical, as the compactor reads `input`
        return [dump_message(m) for m in kept], archive
    return dump_as(kept, ex.api, forms), archive


def joined_part(*segments: Sequence[JsonDict]) -> list[JsonDict]:
    """`segments` one after another, as the service reads a history: from a user turn,
    never an assistant turn after an assistant turn. The proxy's notice (`PART_OPENING`)
    goes where the user turn would be, not the seam's `Continue.`, which would read as a
    request."""
    part: list[JsonDict] = []
    for segment in segments:
        opens = bool(segment) and segment[0].get("role") == "assistant"
        if opens and (not part or part[-1].get("role") == "assistant"):
            part.append({"role": "user", "content": PART_OPENING})
        part.extend(segment)
    return part


def _anthropic_system(body: Mapping[str, Any]) -> list[Message]:
    system = body.get("system")
    if not system:
        return []
    return [Message.model_validate({"role": "system", "content": system})]


def leading_system(messages: Sequence[JsonDict]) -> int:
    """The system (or developer) messages an OpenAI-shape request opens with: they go to
    the service as the system prompt, ahead of a part, and stay as sent."""
    count = 0
    for message in messages:
        if message.get("role") not in _SYSTEM_ROLES:
            break
        count += 1
    return count
