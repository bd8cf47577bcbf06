"""What an LLM server said when it refused a call, in words a user can act on.

An error body is the only place a server says why (a local server's context window is
smaller than the prompt, a model name is unknown): dropping it leaves `HTTP 400` and
nothing to change. Its message and code are kept, but short and never quoting the prompt
(some servers echo the input back), and a context-length refusal names the setting to
lower and the server's window when the message states it.
"""

from __future__ import annotations

import json
import re

# Bytes read of an error body: the message sits at its start; a body may echo the prompt.
ERROR_BODY_BYTES = 4096
MESSAGE_CHARS = 200
# A run of this many characters of the prompt inside the message is an echo of the prompt.
ECHO_CHARS = 20
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error"}
_CONTEXT_WORDS = re.compile(
    r"context (length|window|size)|maximum context|n_ctx|too many tokens|prompt is too long", re.I
)
_WINDOW = re.compile(
    r"(?:maximum context length is|context (?:length|window|size)(?: of| is)?|n_ctx\D{0,4})"
    r"\s*\(?(\d{3,7})",
    re.I,
)
KEY_CHARS = 8
INPUT_BUDGET_SETTING = "COMPACT_SUMMARY_INPUT_BUDGET"
SERVER_WINDOW_SETTING = "COMPACT_SUMMARY_SERVER_WINDOW"


def describe_refusal(
    status: int, body: bytes, prompt: str, key: str | None = None, *, window_setting: bool = False
) -> str:
    """`HTTP <status>` followed by the server's code and message when the body has them;
    a context-length refusal first says which settings to change (`window_setting`: the
    configured window of the server too, which the service fits its prompts to)."""
    described = f"HTTP {status}{server_said(body, prompt, key)}"
    return with_hint(described, body, prompt, window_setting=window_setting)


def server_said(body: bytes, prompt: str, key: str | None = None) -> str:
    """` (code: message)` from an error body, short and never quoting the prompt or any
    part of the API key; '' when the body says nothing readable."""
    code, message = _code_and_message(body)
    said = ": ".join(part for part in (code, _safe(message, prompt, key)) if part)
    return f" ({said})" if said else ""


def with_hint(described: str, body: bytes, prompt: str, *, window_setting: bool = False) -> str:
    """`described`, led by the settings to change when the body is a context-length
    refusal: the input budget, and with `window_setting` the configured window (a stale
    one, larger than the server's, is what lets a fitted prompt through to be refused)."""
    code, message = _code_and_message(body)
    if not _is_context_length(code, message):
        return described
    window = _window(message, body)
    server = f"the server's context window ({window} tokens)" if window else "its window"
    if window_setting:
        server = f"{SERVER_WINDOW_SETTING} to {server}, or unset it (a larger one is stale), and"
        budget = f"{server} {INPUT_BUDGET_SETTING} below it"
    else:
        budget = f"{INPUT_BUDGET_SETTING} below {server}"
    return (
        f"the prompt is longer than the model's context window: set {budget}, leaving room "
        f"for COMPACT_SUMMARY_MAX_TOKENS; {described}"
    )


def _code_and_message(body: bytes) -> tuple[str, str]:
    try:
        payload = json.loads(body[:ERROR_BODY_BYTES])
    except ValueError:
        return "", ""
    if not isinstance(payload, dict):
        return "", ""
    error = payload.get("error")
    if error is None:  # `{"detail": ...}` (FastAPI-style servers), `{"message": ...}`
        said = payload.get("detail") or payload.get("message")
        return "", said if isinstance(said, str) else ""
    if isinstance(error, str):  # Ollama: `{"error": "model 'x' not found"}`
        return "", error
    if not isinstance(error, dict):
        return "", ""
    code = error.get("code") or error.get("type") or ""
    message = error.get("message") or ""
    return (str(code)[:60] if isinstance(code, str | int) else ""), (
        message if isinstance(message, str) else ""
    )


def _safe(message: str, prompt: str, key: str | None) -> str:
    """The message's first line, cut short; nothing when it quotes the prompt or the key
    (servers echo a key, masked or not: 8 of its characters are enough to refuse)."""
    line = message.strip().split("\n", 1)[0]
    shown = line if len(line) <= MESSAGE_CHARS else line[:MESSAGE_CHARS] + "…"
    if key and _quotes(shown, key, KEY_CHARS):
        return "(message omitted: it quotes the key)"
    if _quotes(shown, prompt, ECHO_CHARS):
        return "(message omitted: it quotes the prompt)"
    return shown


def _quotes(text: str, source: str, run: int) -> bool:
    """Whether `run` characters in a row of `text` appear in `source`."""
    return any(text[i : i + run] in source for i in range(max(len(text) - run + 1, 0)))


def _is_context_length(code: str, message: str) -> bool:
    return code in _CONTEXT_CODES or bool(_CONTEXT_WORDS.search(message))


def _window(message: str, body: bytes) -> int | None:
    found = _WINDOW.search(message)
    if found:
        return int(found.group(1))
    try:  # llama.cpp's own server reports it as a field
        payload = json.loads(body[:ERROR_BODY_BYTES])
    except ValueError:
        return None
    error = payload.get("error") if isinstance(payload, dict) else None
    n_ctx = error.get("n_ctx") if isinstance(error, dict) else None
    return n_ctx if isinstance(n_ctx, int) else None
