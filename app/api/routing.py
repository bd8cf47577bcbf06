"""Request JSON parsed by orjson (~3x faster than `json` on the large message lists agents
send, and on the event loop it is pure latency for every other request).

`orjson` refuses a few documents that `json` accepts (integers beyond 64 bits, `NaN`, lone
surrogate escapes); those fall back to `json`, so what is accepted and every error message
stay exactly as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute


class FastJsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            try:
                self._json = orjson.loads(body)
            except orjson.JSONDecodeError:
                self._json = json.loads(body)
        return self._json


class FastJsonRoute(APIRoute):
    """An `APIRoute` whose handler sees a `FastJsonRequest`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def fast_json_handler(request: Request) -> Response:
            return await handler(FastJsonRequest(request.scope, request.receive))

        return fast_json_handler
