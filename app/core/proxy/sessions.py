"""Which session a proxied request belongs to, without the client changing anything.

In order: our own `x-compact-session` header; the agent's own session id (Claude Code's
`x-claude-code-session-id`, Codex's `session-id` / `session_id` headers, Claude Code's
`metadata.user_id`, OpenAI's `prompt_cache_key`); else a hash of what stays the same for a
whole conversation: the system prompt, the tool names and the first user message of its
history (not a message the agent rebuilds each request, `app.core.proxy.live`). The id
is then scoped to the credential (a keyed digest of it, never the credential), so sessions
of different keys never share a compacted head, an archive or a recall.

An agent's own id names its whole run, not one conversation: Claude Code sends the same
id with its subagents' requests and its small side requests (a title, a topic), each a
conversation of its own. So the agent's id is joined with a hash of its conversation's
start (the system prompt and the first user message): a subagent's request never finds
the main conversation's head, nor takes it away.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from app.core.proxy.live import content_text, live_indices
from app.core.proxy.splice import as_read

OUR_HEADER = "x-compact-session"
AGENT_HEADERS = ("x-claude-code-session-id", "session-id", "session_id")
# The headers a credential travels in, as the SDKs send them.
CREDENTIAL_HEADERS = ("x-api-key", "authorization", "api-key", "x-goog-api-key")


def session_key(headers: Mapping[str, str], body: Mapping[str, Any]) -> str:
    """The session's own key: a header or body field the agent sends, else a hash of the
    conversation's invariant start. `headers` have lower-case names."""
    ours = headers.get(OUR_HEADER, "").strip()
    if ours:
        return f"{OUR_HEADER}:{ours}"
    agent = _agent_id(headers, body)
    if agent is not None:
        return f"{agent}/{_conversation_digest(body)}"
    return "start:" + _start_digest(body)


def _agent_id(headers: Mapping[str, str], body: Mapping[str, Any]) -> str | None:
    for name in AGENT_HEADERS:
        value = headers.get(name, "").strip()
        if value:
            return f"{name}:{value}"
    metadata = body.get("metadata")
    if isinstance(metadata, Mapping) and isinstance(metadata.get("user_id"), str):
        return f"user_id:{metadata['user_id']}"
    if isinstance(body.get("prompt_cache_key"), str) and body["prompt_cache_key"]:
        return f"prompt_cache_key:{body['prompt_cache_key']}"
    return None


def _conversation_digest(body: Mapping[str, Any]) -> str:
    """Which of an agent run's conversations a request is: its system prompt and first
    user message (its tools may change within it, as an agent's MCP servers come and go)."""
    system, first_user = _start(body)
    start = [_unmarked(body.get("system")), body.get("instructions"), system, first_user]
    return hashlib.sha256(orjson.dumps(start, default=str)).hexdigest()[:16]


def _start(body: Mapping[str, Any]) -> tuple[list[Any], Any]:
    """The system messages and the first user message of the history as the model reads
    them (`splice.as_read`): a client moves its breakpoint to the latest message, which on
    the first turn is the first user message, wrapped in a block to carry it. The messages
    an agent rebuilds for every request (`app.core.proxy.live`: aider's repository map and
    files) are not its history."""
    messages = body.get("messages") or body.get("input") or []
    messages = [m for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []
    live = set(live_indices(messages))
    history = [m for i, m in enumerate(messages) if i not in live]
    system = [as_read(m) for m in history if m.get("role") in _SYSTEM]
    first_user = next((as_read(m) for m in history if m.get("role") == "user"), None)
    if isinstance(first_user, Mapping) and isinstance(first_user.get("content"), str):
        said = _unrestated(first_user["content"], _system_text(body, system))
        first_user = {**first_user, "content": said}
    return _unmarked(system), _unmarked(first_user)


def _system_text(body: Mapping[str, Any], system: Sequence[Any]) -> str:
    """The text of the system prompt, wherever the shape puts it."""
    parts = [body.get("system"), body.get("instructions"), *(m.get("content") for m in system)]
    return "\n".join(content_text(p) for p in parts)


def _unrestated(text: str, system: str) -> str:
    """`text` without a closing part that restates the system prompt: aider appends its
    edit-format reminder, also the system prompt's end, to the request it sends when its
    model's settings ask for it (`reminder: user`), but keeps the request as typed in its
    history, so the first turn's message would key another session than the later ones'.
    The longest such closing part, of whole paragraphs and at least `_RESTATED` long."""
    last = text.rfind("\n\n")
    if len(system) < _RESTATED or last == -1 or text[last:].strip() not in system:
        return text  # any closing part found in the prompt has its last paragraph there
    start = text.find("\n\n")
    while start != -1:
        closing = text[start:].strip()
        if len(closing) >= _RESTATED and closing in system:
            return text[:start].rstrip()
        start = text.find("\n\n", start + 2)
    return text


_RESTATED = 40  # characters: less could be a user's own closing line that a prompt shares


def _unmarked(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _start_digest(body: Mapping[str, Any]) -> str:
    system, first_user = _start(body)
    tools = body.get("tools") or []
    names = [
        t.get("name") or (t.get("function") or {}).get("name")
        for t in tools
        if isinstance(t, Mapping)
    ]
    start = [_unmarked(body.get("system")), body.get("instructions"), system, names, first_user]
    return hashlib.sha256(orjson.dumps(start, default=str)).hexdigest()[:32]


_SYSTEM = frozenset({"system", "developer"})


def credential_of(headers: Mapping[str, str]) -> str:
    """The credential the request carries (empty when none): what scopes its session."""
    parts: Sequence[str] = [headers.get(name, "") for name in CREDENTIAL_HEADERS]
    return "\n".join(parts)


def scoped_session_id(secret: bytes, credential: str, key: str) -> str:
    """The id the service knows the session by: a keyed digest of the credential and the
    session's key. `secret` is the process's own, or with a database the one its
    replicas share; neither input can be read back."""
    scope = hmac.new(secret, credential.encode(), hashlib.sha256).hexdigest()[:16]
    session = hashlib.sha256(key.encode()).hexdigest()[:24]
    return f"proxy-{scope}-{session}"
