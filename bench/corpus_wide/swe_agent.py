"""SWE-agent runs as SWE-agent writes them (a `.traj` file's `history`).

SWE-agent's trajectory format (`sweagent/agent/agents.py`, `history` of the `.traj`
JSON): the messages it sent the model, each with a `role`. The system prompt is left out
(the corpus's sessions have none); demonstration messages (`is_demo`) are an example run
pasted into the prompt, not this session, and are left out too. The first user message is
SWE-agent's instance template around the issue text: it stays the user's turn as sent.
Every assistant message is one action: with function calling its `tool_calls` name the
command and its arguments, and the `tool` message after it is the observation; without
(the older "thought + command block" agents) the `action` string is what SWE-agent ran in
its bash session, so it becomes a `bash` call with that command, answered by the next
user message (the observation). SWE-agent flags no failed action: results stay unflagged.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from bench.corpus_wide.session import Transcript


def convert(text: str) -> Transcript:
    history: list[dict[str, Any]] = [
        m for m in json.loads(text)["history"] if m.get("role") != "system" and not m.get("is_demo")
    ]
    transcript = Transcript()
    i = 0
    while i < len(history):
        message = history[i]
        content = _text(message.get("content"))
        if message["role"] != "assistant":
            transcript.user(content)
            i += 1
            continue
        calls = _calls(message)
        thought = str(message.get("thought") or content)
        transcript.say(thought)
        answer = history[i + 1] if i + 1 < len(history) else None
        if not calls or answer is None or answer["role"] == "assistant":
            i += 1
            continue
        name, arguments = calls[0]
        transcript.call(name, arguments, _text(answer.get("content")))
        i += 2
    return transcript


def _calls(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The action as a call: the first function call, or the bash command run."""
    raw = message.get("tool_calls")
    if isinstance(raw, str):  # older SWE-agent versions stored the list's repr
        raw = _literal(raw)
    if isinstance(raw, list) and raw:
        function = raw[0].get("function", {})
        arguments = function.get("arguments", "{}")
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except json.JSONDecodeError:
            parsed = {"arguments": arguments}
        if not isinstance(parsed, dict):
            parsed = {"arguments": parsed}
        return [(str(function.get("name", "bash")), parsed)]
    action = str(message.get("action") or "").strip()
    return [("bash", {"command": action})] if action else []


def _literal(raw: str) -> Any:
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return None


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")
