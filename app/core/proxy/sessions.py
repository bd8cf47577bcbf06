"""Which session a proxied request belongs to, without the client changing anything.

In order: our own `x-compact-session` header; the agent's own session id (Claude Code's
`x-claude-code-session-id`, Codex's `session-id` / `session_id` headers, Claude Code's
`metadata.user_id`, OpenAI's `prompt_cache_key`); else a hash of what stays the same for a
whole conversation: the system prompt, the tool names and the first user message. The id
is then scoped to the credential (a keyed digest of it, never the credential), so sessions
of different keys never share a compacted head, an archive or a recall.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

OUR_HEADER = "x-compact-session"
AGENT_HEADERS = ("x-claude-code-session-id", "session-id", "session_id")
# The headers a credential travels in, as the SDKs send them.
CREDENTIAL_HEADERS = ("x-api-key", "authorization", "api-key", "x-goog-api-key")


def session_key(headers: Mapping[str, str], body: Mapping[str, Any]) -> str:
    """The session's own key: a header or body field the agent sends, else a hash of the
    conversation's invariant start. `headers` have lower-case names."""
    for name in (OUR_HEADER, *AGENT_HEADERS):
        value = headers.get(name, "").strip()
        if value:
            return f"{name}:{value}"
    metadata = body.get("metadata")
    if isinstance(metadata, Mapping) and isinstance(metadata.get("user_id"), str):
        return f"user_id:{metadata['user_id']}"
    if isinstance(body.get("prompt_cache_key"), str) and body["prompt_cache_key"]:
        return f"prompt_cache_key:{body['prompt_cache_key']}"
    return "start:" + _start_digest(body)


def _start_digest(body: Mapping[str, Any]) -> str:
    messages = body.get("messages") or body.get("input") or []
    system = [m for m in messages if isinstance(m, Mapping) and m.get("role") in _SYSTEM]
    first_user = next(
        (m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"), None
    )
    tools = body.get("tools") or []
    names = [
        t.get("name") or (t.get("function") or {}).get("name")
        for t in tools
        if isinstance(t, Mapping)
    ]
    start = [body.get("system"), body.get("instructions"), system, names, first_user]
    return hashlib.sha256(orjson.dumps(start, default=str)).hexdigest()[:32]


_SYSTEM = frozenset({"system", "developer"})


def credential_of(headers: Mapping[str, str]) -> str:
    """The credential the request carries (empty when none): what scopes its session."""
    parts: Sequence[str] = [headers.get(name, "") for name in CREDENTIAL_HEADERS]
    return "\n".join(parts)


def scoped_session_id(secret: bytes, credential: str, key: str) -> str:
    """The id the service knows the session by: a keyed digest of the credential and the
    session's key. `secret` is the process's own; neither input can be read back."""
    scope = hmac.new(secret, credential.encode(), hashlib.sha256).hexdigest()[:16]
    session = hashlib.sha256(key.encode()).hexdigest()[:24]
    return f"proxy-{scope}-{session}"
