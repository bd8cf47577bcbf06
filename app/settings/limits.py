"""Hardening: what one request may be (size, messages, blocks, depth, time), how many
recalls run at once, and the bearer token."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, SecretStr

MaxRequestBytes = Annotated[
    int,
    Field(32 * 1024 * 1024, gt=0, description="larger bodies get 413"),
]

MaxMessages = Annotated[
    int,
    Field(10_000, gt=0, description="more messages in one request get 422 `too_many_messages`"),
]

MaxBlocks = Annotated[
    int,
    Field(
        50_000,
        gt=0,
        description=(
            "more content blocks and tool calls in one request, all messages together, "
            "get 422 `too_many_blocks`"
        ),
    ),
]

MaxDepth = Annotated[
    int,
    Field(
        64,
        ge=8,  # a content block already sits at level 5: body, messages, message, content
        le=512,
        description="deeper JSON nesting gets 422 `too_deep`",
    ),
]

RequestTimeout = Annotated[
    float,
    Field(
        300.0,
        gt=0,
        description=(
            "seconds a request may take, upload included (504 `deadline_exceeded` after); "
            "not `/healthz`, `/readyz`, `/metrics`"
        ),
    ),
]

RecallSlots = Annotated[
    int,
    Field(
        4,
        ge=1,
        description=(
            "recalls searching at once, each on a thread of its own pool, so recalls never "
            "take the threads of the other routes"
        ),
    ),
]

RecallSlotWait = Annotated[
    float,
    Field(
        1.0,
        ge=0,
        description="seconds a recall waits for a free slot before 503 `busy` with `Retry-After`",
    ),
]

ApiToken = Annotated[
    SecretStr | None,
    Field(
        None,
        description=(
            "when set, every route but `/healthz`, `/readyz`, `/metrics` and the docs "
            "(`/docs`, `/redoc`, `/openapi.json`) needs `Authorization: Bearer <token>` "
            "(401 otherwise); never logged"
        ),
    ),
]
