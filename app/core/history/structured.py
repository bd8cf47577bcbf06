"""Tool results that are a JSON object, as harnesses write them, read for what failed.

- Roo Code reports a failed call as `{"status": "error", "message": "The tool execution
  failed", "error": "Error reading file: ..."}` and a refused one as `{"status": "denied",
  "message": "The user denied this operation."}` (`formatResponse` in
  `src/core/prompts/responses.ts`);
- Gemini CLI answers a call with a `functionResponse` whose `response` is `{"output": ...}`
  or, when the call failed or was cancelled, `{"error": "..."}` (`tool-executor.ts`);
- Codex's shell tool answered `{"output": ..., "metadata": {"exit_code": 1, ...}}`.

The error is the object's own statement of it (its `error`, else its `message`), read for
its key line like any result's text; an `output` holds the result itself. A text that is
not one JSON object is left to the line rules (`app.core.history.failures`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Larger objects are output (a listing, a file), never a harness's status.
MAX_OBJECT_CHARS = 200_000
FAILED_STATUSES = frozenset({"error", "failed", "failure", "denied", "rejected", "cancelled"})
_EXIT_KEYS = ("exit_code", "exitCode", "returncode")
PLACEHOLDERS = frozenset({"", "(none)", "(empty)", "none", "null"})


@dataclass(frozen=True)
class Structured:
    """What a JSON result says: the text to read (`text`), and whether the object itself
    says the call failed (`failed`)."""

    text: str
    failed: bool


def read_structured(text: str) -> Structured | None:
    """None when `text` is not a JSON object with an `error`, a failed `status`, an exit
    code or an `output`."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    if len(stripped) > MAX_OBJECT_CHARS:
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    return _read(data) if isinstance(data, dict) else None


def _read(data: Mapping[str, Any]) -> Structured | None:
    error = _said(data.get("error"))
    status = data.get("status")
    output = data.get("output")
    output_text = output if isinstance(output, str) else ""
    if error:
        return Structured(error, True)
    if isinstance(status, str) and status.lower() in FAILED_STATUSES:
        # A refusal's `feedback` is the user's words (`app.core.history.harness`), not the error.
        message = _said(data.get("message")) or status
        return Structured(message, True)
    code = _exit_code(data)
    if code:
        return Structured(output_text or f"exit code {code}", True)
    if isinstance(output, str):
        return Structured(output, False)
    return None


def _said(value: Any) -> str:
    """A statement's text: a string that is not a placeholder, or an object's `message`."""
    if isinstance(value, Mapping):
        value = value.get("message")
    if not isinstance(value, str) or value.strip().lower() in PLACEHOLDERS:
        return ""
    return value.strip()


def _exit_code(data: Mapping[str, Any]) -> int:
    metadata = data.get("metadata")
    places = [data, metadata] if isinstance(metadata, Mapping) else [data]
    for place in places:
        for key in _EXIT_KEYS:
            code = place.get(key)
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                return code
    return 0
