"""Request JSON parsed by orjson and validated as soon as it is parsed.

orjson is ~3x faster than `json` on the large message lists agents send, and on the event
loop it is pure latency for every other request. It refuses a few documents that `json`
accepts (integers beyond 64 bits, `NaN`, lone surrogate escapes); those fall back to
`json`, so what is accepted and every error message stay exactly as before.

Memory: FastAPI keeps whatever `Request.body()` and `Request.json()` return alive until the
response is sent. For a JSON body, `FastJsonRequest` hands FastAPI a one-byte stand-in for
the body and, from `json()`, the route's body model already validated (FastAPI re-validates
a model instance as itself, at no cost), so neither the body bytes nor the parsed document
outlive parsing: ~1x the body less at the peak of a large `/compact` (bench/RESULTS.md).
A body that does not validate is handed over as the parsed document, and FastAPI reports it
exactly as it always did.
"""

from __future__ import annotations

import email.message
import json
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.types import Receive, Scope

# What FastAPI sees as the body once the real bytes are held for `json()` only: it only
# asks whether the body is empty before calling `json()`.
_READ = b"\x00"


def is_json_content(request: Request) -> bool:
    """FastAPI's own test for calling `json()` (an `application/json` or `+json` type)."""
    content_type = request.headers.get("content-type")
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


def parse_json(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)  # accepts what orjson refuses, or raises json's own error


class FastJsonRequest(Request):
    """A request whose JSON body is parsed by orjson and, given `validate` (the parsed
    document in; the route's body model out, or None to let FastAPI validate and report
    it), validated on parsing."""

    def __init__(
        self,
        scope: Scope,
        receive: Receive,
        validate: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__(scope, receive)
        self._validate = validate
        self._unparsed: bytes | None = None
        self._stand_in: bytes | None = None

    async def body(self) -> bytes:
        if self._validate is None or not is_json_content(self):
            return await super().body()
        if self._stand_in is None:
            # Read without Starlette's cache (`_body`), which would live as long as we do.
            self._unparsed = b"".join([chunk async for chunk in self.stream()])
            self._stand_in = _READ if self._unparsed else b""
        return self._stand_in

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            if self._validate is not None and is_json_content(self):
                await self.body()
                body, self._unparsed = self._unparsed or b"", None
            else:
                body = await super().body()
            document = parse_json(body)
            del body
            validated = self._validate(document) if self._validate is not None else None
            self._json = document if validated is None else validated
        return self._json


class FastJsonRoute(APIRoute):
    """An `APIRoute` whose handler sees a `FastJsonRequest` validating its body model."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        field = self.body_field

        def body_model(document: Any) -> Any:
            assert field is not None
            value, errors = field.validate(document, {}, loc=("body",))
            return None if errors else value

        validate = body_model if field is not None else None

        async def fast_json_handler(request: Request) -> Response:
            return await handler(FastJsonRequest(request.scope, request.receive, validate))

        return fast_json_handler
