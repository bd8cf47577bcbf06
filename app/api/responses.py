"""One JSON response class, rendered by orjson (faster than json for the large message
lists this service returns), numbers kept as sent written as they were sent
(app/core/json_numbers.py)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from app.core.json_numbers import dumps


class JsonResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)
