"""The request bodies captured from the SDKs' wire (`tests/data/sdk_bodies/`, written by
`scripts/capture_sdk_bodies.py`; how each was captured is in that directory's README)."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

SDK_BODIES_DIR = Path(__file__).resolve().parent / "data" / "sdk_bodies"
NAMES = sorted(p.stem for p in SDK_BODIES_DIR.glob("*.json"))
Api = Literal["anthropic", "chat", "responses"]


@cache
def _record(name: str) -> dict[str, Any]:
    record: dict[str, Any] = json.loads((SDK_BODIES_DIR / f"{name}.json").read_text("utf-8"))
    return record


def body(name: str) -> dict[str, Any]:
    """The JSON the SDK sent (a copy: a test may change it)."""
    return copy.deepcopy(_record(name)["body"])


def headers(name: str) -> dict[str, str]:
    """The headers that shaped the request (`anthropic-beta`, `anthropic-version`)."""
    return dict(_record(name)["headers"])


def path(name: str) -> str:
    """The path the SDK posted to."""
    return str(_record(name)["path"])


def api_of(name: str) -> Api:
    path = _record(name)["path"]
    if path.startswith("/v1/messages"):
        return "anthropic"
    return "responses" if path.startswith("/v1/responses") else "chat"


def beta(name: str) -> bool:
    """Sent by `beta.messages.create` (its fields exist only there)."""
    return "beta.messages.create" in _record(name)["call"]


def messages_key(name: str) -> str:
    return "input" if api_of(name) == "responses" else "messages"
