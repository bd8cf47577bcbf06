"""Request limits: body size (413) before the body is read, then the shape of the parsed
body (422) before pydantic builds a single model.

A declared `Content-Length` over the limit is refused before reading anything; a chunked
body is counted as it streams and refused as soon as it passes the limit, so a huge upload
never sits in memory.

The shape check walks the parsed JSON once, iteratively (no recursion to exhaust): nesting
deeper than `max_depth`, more than `max_messages` messages (a Responses API body's `input`
items), or more than `max_blocks` content blocks and tool calls across all messages get a
422 naming the field. Pydantic and
the tokenizer never see such a body, so their cost stays bounded by the limits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.errors import ApiError, error_response
from app.api.schemas import ErrorResponse
from app.api.text import NOT_TEXT, unencodable_at


class BodyTooLargeError(Exception):
    pass


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLargeError
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except BodyTooLargeError:
            if not started:
                await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413,
            ErrorResponse(
                error="request_too_large",
                message=f"request body exceeds {self.max_bytes} bytes",
            ),
        )
        await response(scope, receive, send)


@dataclass(frozen=True)
class ShapeLimits:
    max_messages: int
    max_blocks: int
    max_depth: int


def too_deep(max_depth: int, field: str = "body") -> ApiError:
    return ApiError(422, "too_deep", f"JSON nested deeper than {max_depth} levels", field=field)


def check_shape(document: Any, limits: ShapeLimits) -> None:
    """Raises a 422 `ApiError` when the parsed body passes a limit (see module doc)."""
    if _deeper_than(document, limits.max_depth):
        raise too_deep(limits.max_depth, _deep_path(document, limits.max_depth))
    where = "messages"
    if isinstance(document, dict) and "messages" not in document:
        where = "input"  # a Responses API body's items
    messages = document.get(where) if isinstance(document, dict) else None
    if not isinstance(messages, list):
        return
    if len(messages) > limits.max_messages:
        raise ApiError(
            422,
            "too_many_messages",
            f"{len(messages)} messages; at most {limits.max_messages} are accepted",
            field=where,
        )
    blocks = 0
    for index, message in enumerate(messages):
        if isinstance(message, dict):
            for key in ("content", "tool_calls"):
                items = message.get(key)
                if isinstance(items, list):
                    blocks += len(items)
        if blocks > limits.max_blocks:
            raise ApiError(
                422,
                "too_many_blocks",
                f"more than {limits.max_blocks} content blocks and tool calls in all",
                field=f"{where}[{index}]",
            )


def _children(node: Any) -> Iterable[Any] | None:
    if isinstance(node, dict):
        return node.values()
    if isinstance(node, list):
        return node
    return None


def _deeper_than(document: Any, max_depth: int) -> bool:
    """The top-level value is level 1; only objects and arrays count.

    Level by level: a list of each level's containers, no per-node tuples or calls: it is
    on every request's path (its cost is in bench/RESULTS.md)."""
    level = [document] if isinstance(document, (dict, list)) else []
    depth = 1
    while level:
        if depth > max_depth:
            return True
        deeper: list[Any] = []
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                if isinstance(child, (dict, list)):
                    deeper.append(child)
        level = deeper
        depth += 1
    return False


def _deep_path(document: Any, max_depth: int) -> str:
    """Where the first too-deep container sits, as `messages[0].content[0].input.a`; only
    computed for a body already refused."""
    stack: list[tuple[Any, str, int]] = [(document, "", 1)]
    while stack:
        node, path, depth = stack.pop()
        if depth > max_depth:
            return path or "body"
        if isinstance(node, dict):
            for key, child in node.items():
                if _children(child) is not None:
                    stack.append((child, f"{path}.{key}" if path else str(key), depth + 1))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                if _children(child) is not None:
                    stack.append((child, f"{path}[{index}]" if path else f"[{index}]", depth + 1))
    return "body"


def unencodable_text(document: Any) -> ApiError | None:
    """422 `invalid_request` naming the first string with no UTF-8 form (`app.api.text`)."""
    field = unencodable_at(document)
    return None if field is None else ApiError(422, "invalid_request", NOT_TEXT, field=field)
