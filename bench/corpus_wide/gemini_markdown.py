"""Gemini CLI sessions as its `/chat share` markdown writes them.

Turns are split by `---` lines and opened by `🧑‍💻 ## USER` or `✨ ## MODEL`. A model
turn holds its text and `**Tool Command**:` blocks (a fenced JSON `{"name", "args"}`); the
user turn after it holds the matching `**Tool Response**:` blocks (`{"id", "name",
"response": {"output"} or {"error"}}`) and any text. The first user turn is Gemini CLI's
own context setup ("This is the Gemini CLI. We are setting up the context for our
chat..."), kept as the agent sent it. A response with `error` is flagged `is_error`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from bench.corpus_wide.session import Transcript

_TURN = re.compile(r"^(?:🧑‍💻|✨) ## (USER|MODEL)\s*$", re.MULTILINE)
_TOOL = re.compile(r"\*\*Tool (Command|Response)\*\*:\s*\n```json\n(.*?)\n```", re.DOTALL)
_RULE = re.compile(r"\n---\s*$")


def convert(text: str) -> Transcript:
    transcript = Transcript()
    pending: list[tuple[str, dict[str, Any]]] = []
    heads = list(_TURN.finditer(text))
    for head, following in zip(heads, [*heads[1:], None], strict=True):
        body = text[head.end() : following.start() if following else len(text)]
        body = _RULE.sub("", body.rstrip())
        if head.group(1) == "MODEL":
            _flush_unanswered(transcript, pending)
            pending = _model(transcript, body)
        else:
            pending = _user(transcript, body, pending)
    _flush_unanswered(transcript, pending)
    return transcript


def _model(transcript: Transcript, body: str) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    at = 0
    for block in _TOOL.finditer(body):
        transcript.say(body[at : block.start()])
        at = block.end()
        data = _json(block.group(2))
        calls.append((str(data.get("name", "tool")), dict(data.get("args") or {})))
    transcript.say(body[at:])
    return calls


def _user(
    transcript: Transcript, body: str, pending: list[tuple[str, dict[str, Any]]]
) -> list[tuple[str, dict[str, Any]]]:
    texts: list[str] = []
    at = 0
    for block in _TOOL.finditer(body):
        texts.append(body[at : block.start()])
        at = block.end()
        data = _json(block.group(2))
        response = data.get("response") or {}
        error = "error" in response
        output = response.get("error" if error else "output", response)
        result = output if isinstance(output, str) else json.dumps(output)
        name = str(data.get("name", "tool"))
        match = next((i for i, (n, _) in enumerate(pending) if n == name), 0 if pending else None)
        arguments = pending.pop(match)[1] if match is not None else {}
        transcript.call(name, arguments, result, is_error=error)
    texts.append(body[at:])
    _flush_unanswered(transcript, pending)
    transcript.user("\n".join(t.strip() for t in texts if t.strip()))
    return []


def _flush_unanswered(transcript: Transcript, pending: list[tuple[str, dict[str, Any]]]) -> None:
    for name, arguments in pending:
        transcript.call(name, arguments, "(no response recorded)")
    pending.clear()


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
