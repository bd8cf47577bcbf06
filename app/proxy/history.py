"""A request's history, apart from the messages its agent rebuilds for every request
(`app.core.proxy.live`): the compactor plans for the history alone, those messages
counted with the system prompt and tools, then puts them back where the agent sent them."""

from __future__ import annotations

from dataclasses import replace

from app.core.proxy import Head, Split
from app.proxy.exchange import Exchange, Planned


def history_of(ex: Exchange, parts: Split) -> Exchange:
    """`ex` with its history for messages, its live messages aside (`Exchange.live`)."""
    if not parts.live:
        return ex
    live = tuple(message for _, message in parts.live)
    return ex.with_messages(parts.history, live)


def restored(parts: Split, planned: Planned, head: Head | None) -> Planned:
    """`planned`, made for the history, with the live messages back in: around `head`,
    the session's, when the history was sent with it."""
    if not parts.live:
        return planned
    used = None if planned.messages == parts.history else head
    return replace(planned, messages=parts.restore(planned.messages, used))
