"""Request JSON parsed by orjson, checked against the request limits before any model is
built, then validated as soon as it is parsed.

orjson is faster than `json` on the large message lists agents send, and on the event
loop it is pure latency for every other request. It refuses a few documents that `json`
accepts (`NaN`, `1e309`, lone surrogate escapes) and alters numbers it cannot hold (beyond
64 bits, `-0`, `1e-400`); those documents are parsed by `json` keeping each such number's
literal (app/core/json_numbers.py), so what is accepted and every error message stay as
before, but for lone surrogates: a string that has no UTF-8 form is a 422 `invalid_request`
naming it, on every route (see `unencodable_text`), and a number literal over
`MAX_NUMBER_CHARS` characters: a 422 `number_too_long` naming where it sits. Nesting past
either parser's recursion limit is a 422 `too_deep`, never a `RecursionError`.

Memory: FastAPI keeps whatever `Request.body()` and `Request.json()` return alive until the
response is sent. For a JSON body, `FastJsonRequest` hands FastAPI a one-byte stand-in for
the body and, from `json()`, the route's body model already validated (FastAPI re-validates
a model instance as itself, at no cost), so neither the body bytes nor the parsed document
outlive parsing, which lowers the peak memory of a large `/compact` (bench/RESULTS.md).
A body that does not validate is handed over as the parsed document, and FastAPI reports it
exactly as it always did.
"""

from __future__ import annotations

import email.message
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi._compat import ModelField
from fastapi.routing import APIRoute
from starlette.types import Receive, Scope

from app.api.errors import ApiError
from app.api.limits import ShapeLimits, check_shape, too_deep, unencodable_text
from app.api.parts import parts_of
from app.api.schemas import ErrorResponse
from app.core import json_numbers
from app.core.json_numbers import NumberTooLongError

# What FastAPI sees as the body once the real bytes are held for parsing only: it only
# asks whether the body is empty before calling `json()`.
_READ = b"\x00"
# `FastJsonRequest._document` until the body is parsed.
_UNPARSED = object()


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
        self._document: Any = _UNPARSED
        self.by_orjson = False

    def _holds_body(self) -> bool:
        return self._validate is not None and is_json_content(self)

    async def body(self) -> bytes:
        if not self._holds_body():
            return await super().body()
        if self._stand_in is None:
            # Read without Starlette's cache (`_body`), which would live as long as we do.
            self._unparsed = b"".join([chunk async for chunk in self.stream()])
            self._stand_in = _READ if self._unparsed else b""
        return self._stand_in

    async def json(self) -> Any:
        if self._document is _UNPARSED:
            self._document = self._validated(await self._parse())
        return self._document

    async def _parse(self) -> Any:
        """The body's JSON document; held bytes are released once it parses."""
        if not self._holds_body():
            document, self.by_orjson = _loads(await super().body(), self._max_depth())
            return document
        await self.body()
        document, self.by_orjson = _loads(self._unparsed or b"", self._max_depth())
        self._unparsed = None
        return document

    def _validated(self, document: Any) -> Any:
        validated = self._validate(document) if self._validate is not None else None
        return document if validated is None else validated

    def _limits(self) -> ShapeLimits | None:
        parts = parts_of(self.app) if "app" in self.scope else None
        return parts.shape_limits if parts is not None else None

    def _max_depth(self) -> int:
        limits = self._limits()
        return limits.max_depth if limits else 1024

    async def check_limits(self) -> None:
        """Parses a JSON body early and applies the request limits (422 `ApiError`); a body
        that does not parse is left for the route to report as it always has."""
        limits = self._limits()
        if limits is None or self.method not in ("POST", "PUT", "PATCH"):
            return
        if self._document is not _UNPARSED or not await self.body():
            return
        try:
            document = await self._parse()
        except ApiError:
            raise
        except Exception:  # malformed JSON: FastAPI's own 422 names the position
            return
        check_shape(document, limits)
        self._document = self._validated(document)


def _loads(body: bytes, max_depth: int) -> tuple[Any, bool]:
    """The document, its numbers as sent (app/core/json_numbers.py), and whether orjson
    accepted the text (else `json` parsed what orjson refuses)."""
    try:
        document, by_orjson = json_numbers.loads(body)
    except RecursionError:
        raise too_deep(max_depth) from None
    except NumberTooLongError as exc:
        raise ApiError(422, "number_too_long", str(exc), field=exc.path) from None
    if by_orjson:
        return document, True
    refused = unencodable_text(document)
    if refused is not None:
        raise refused
    return document, False


def parsed_by_orjson(request: Request) -> bool:
    """Whether orjson accepted the request's JSON body: then re-serializing any part of it
    (`json_numbers.dumps`) gives one JSON text per value (`json`'s NaN would come back as
    `null`)."""
    return isinstance(request, FastJsonRequest) and request.by_orjson


CONTENT_TYPE_FIELD = "headers.content-type"
UNSUPPORTED_MEDIA_TYPE = {
    "model": ErrorResponse,
    "description": "The request has no `content-type: application/json` header (error "
    "`unsupported_media_type`, field `headers.content-type`).",
}
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


def unsupported_media_type(request: Request) -> ApiError:
    """A 415 naming the header and what was sent, so a client that forgot it (curl without
    `-H 'content-type: application/json'`, a form post) learns what to fix."""
    sent = request.headers.get("content-type")
    got = f"got `{sent}`" if sent else "the header is missing"
    return ApiError(
        415,
        "unsupported_media_type",
        f"the request body must be JSON with a `content-type: application/json` header; {got}",
        field=CONTENT_TYPE_FIELD,
    )


class FastJsonRoute(APIRoute):
    """An `APIRoute` whose handler sees a `FastJsonRequest`, limits already checked, that
    validates the route's body model on parsing. A route with a body answers 415 to a
    request that does not declare JSON (`application/json` or a `+json` type), before
    reading the body. Each such route declares it (`415: UNSUPPORTED_MEDIA_TYPE` in its
    router's or its own `responses`); the constructor is FastAPI's, untouched. What this
    relies on in FastAPI beyond its documented API is pinned by
    tests/api/test_fastapi_internals.py."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        field = self.body_field

        validate = None if field is None else _body_validator(field)

        async def fast_json_handler(request: Request) -> Response:
            needs_json = field is not None and request.method in _BODY_METHODS
            if needs_json and not is_json_content(request):
                raise unsupported_media_type(request)
            fast = FastJsonRequest(request.scope, request.receive, validate)
            await fast.check_limits()
            return await handler(fast)

        return fast_json_handler


def _body_validator(field: ModelField) -> Callable[[Any], Any]:
    """The route's body model validated from a parsed document; None when it is invalid
    (FastAPI then reports it from the document, exactly as it would have)."""

    def body_model(document: Any) -> Any:
        value, errors = field.validate(document, {}, loc=("body",))
        return None if errors else value

    return body_model
