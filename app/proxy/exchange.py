"""What the proxy's compactor is given and gives back: one request (`Exchange`), what to
send for it (`Planned`), and the policy its compactions follow (`ProxyPolicy`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from app.core.cost import SummarizerCost
from app.core.model_table import ModelSpec
from app.core.proxy import JsonDict, Marks, Shape, counted_json, with_conversation
from app.core.vocabulary import Format

Api = Literal["anthropic", "openai"]
Action = Literal["none", "skipped", "precompact_started", "applied", "compacted", "retried"]


@dataclass(frozen=True)
class ProxyPolicy:
    marks: Marks = field(default_factory=Marks)
    keep_share: float = 0.35  # of the limit kept as sent at a compaction, at most
    min_keep_share: float = 0.1  # ... and at least, when the head leaves less room
    target_share: float = 0.5  # where a compaction brings the request back to
    head_share: float = 0.15  # a new summary's guess until the session has made one
    fold_share: float = 0.35
    # The session's first messages kept as sent ahead of every head, up to this share of
    # the limit: a prefix the provider has cached since the session began.
    pin_share: float = 0.2
    # ... and at least this share (within `pin_share`), whatever room the session needs:
    # a short first request costs no more kept than summarized.
    pin_floor: float = 0.02
    wait_seconds: float = 3.0
    quiet_share: float = 0.1  # of the limit, grown after a head is put in before the next
    max_sessions: int = 1000
    max_lookahead: int = 4  # turns a compaction is foreseen to take, at most
    surprise: float = 2.0  # a standby is kept for a turn this many times the largest so far


@dataclass(frozen=True)
class Exchange:
    """One request as the compactor sees it: its API, session, parsed body, model and
    the input limit it must fit. A Responses body's `input` is read as canonical messages
    (`conversation`, `app.core.proxy.bodies`) and written back as items (`body_with`)."""

    api: Api
    session_id: str
    body: Mapping[str, Any]
    spec: ModelSpec
    limit: int
    size: int = 0  # the body's bytes
    # Messages the agent rebuilds for every request (`app.core.proxy.live`), taken out of
    # `body`'s: sent as they are, counted with the system prompt and tools.
    live: tuple[JsonDict, ...] = ()
    shape: Shape = "messages"
    conversation: tuple[JsonDict, ...] | None = None  # `input` read, for `shape` "input"

    @property
    def messages(self) -> list[JsonDict]:
        if self.conversation is not None:
            return list(self.conversation)
        messages = self.body.get("messages")
        return list(messages) if isinstance(messages, list) else []

    @property
    def format(self) -> Format:
        """The service's name for the request's message shape."""
        return "responses" if self.shape == "input" else self.api

    def body_with(self, messages: list[JsonDict]) -> dict[str, Any]:
        """The body to send with `messages` in place of the conversation sent."""
        return with_conversation(self.body, self.shape, messages)

    def with_messages(self, messages: list[JsonDict], live: tuple[JsonDict, ...]) -> Exchange:
        """This request with `messages` for its conversation and `live` aside."""
        if self.conversation is not None:
            return replace(self, conversation=tuple(messages), live=live)
        return replace(self, body={**self.body, "messages": messages}, live=live)

    def counted_json(self, message: JsonDict) -> tuple[str, int]:
        """What our count reads of one of its messages, and its media's tokens
        (`app.core.proxy.counted_json`)."""
        return counted_json(self.shape, message)


@dataclass(frozen=True)
class Planned:
    """The messages to send and what was done to get them."""

    session_id: str
    messages: list[JsonDict]
    action: Action
    reason: str | None
    tokens_before: int | None  # None: not counted (surely below the start mark)
    tokens_after: int | None
    counted: int  # our own count of what is sent (before any ratio): for the usage ratio
    cost: SummarizerCost | None = None  # what the head this request put in cost
