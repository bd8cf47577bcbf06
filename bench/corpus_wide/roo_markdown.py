"""Roo Code (and Cline) sessions as their "Export task" markdown writes them.

Turns are split by `---` lines and opened by `**User:**` or `**Assistant:**`. The
assistant calls a tool in Roo's documented XML form (`<read_file><path>x</path>
</read_file>`: the tag is the tool, its child tags the parameters); the user turn after it
starts with the harness's `[tool for 'arg'] Result:` header and the tool's output, then
`<environment_details>` and any feedback, which stay in the user's turn as sent. Each XML
call becomes a tool call of the same name and parameters (what Roo's native tool calling
sends) answered by the text after the header. Results whose harness text says the call
failed (`[ERROR]`, `The tool execution failed`, `The user denied this operation`) are
left unflagged: the export records no flag.
"""

from __future__ import annotations

import re
from typing import Any

from bench.corpus_wide.session import Transcript

# Roo Code's and Cline's documented tools.
TOOLS = (
    "read_file",
    "write_to_file",
    "apply_diff",
    "insert_content",
    "search_and_replace",
    "replace_in_file",
    "execute_command",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "codebase_search",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "ask_followup_question",
    "attempt_completion",
    "switch_mode",
    "new_task",
    "fetch_instructions",
    "update_todo_list",
    "plan_mode_respond",
)
_TURN = re.compile(r"^\*\*(User|Assistant):\*\*\s*$", re.MULTILINE)
_CALL = re.compile(rf"<({'|'.join(TOOLS)})>(.*?)</\1>", re.DOTALL)
_PARAM = re.compile(r"<([a-z_]+)>(.*?)</\1>", re.DOTALL)
_RESULT = re.compile(r"^\s*\[[^\]\n]+\] Result:\s*\n?")
_RULE = re.compile(r"\n---\s*$")
_ENVIRONMENT = "<environment_details>"


def convert(text: str) -> Transcript:
    transcript = Transcript()
    pending: list[tuple[str, dict[str, Any]]] = []
    heads = list(_TURN.finditer(text))
    for head, following in zip(heads, [*heads[1:], None], strict=True):
        body = _RULE.sub(
            "", text[head.end() : following.start() if following else len(text)].rstrip()
        )
        if head.group(1) == "Assistant":
            _answer(transcript, pending, "(no result recorded)")
            pending = _assistant(transcript, body)
        elif pending and _RESULT.match(body):
            header = _RESULT.match(body)
            assert header is not None
            rest = body[header.end() :]
            output, marker, after = rest.partition(_ENVIRONMENT)
            _answer(transcript, pending, f"{header.group(0).strip()}\n{output.strip()}")
            transcript.user(f"{marker}{after}")
            pending = []
        else:
            _answer(transcript, pending, "(no result recorded)")
            pending = []
            transcript.user(body)
    _answer(transcript, pending, "(no result recorded)")
    return transcript


def _assistant(transcript: Transcript, body: str) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    at = 0
    for call in _CALL.finditer(body):
        transcript.say(body[at : call.start()])
        at = call.end()
        calls.append((call.group(1), _parameters(call.group(2))))
        break  # Roo runs one tool per message; the rest of the text is the model's
    transcript.say(body[at:])
    return calls


def _parameters(inner: str) -> dict[str, Any]:
    found = {m.group(1): m.group(2).strip("\n") for m in _PARAM.finditer(inner)}
    return found or {"input": inner.strip()}


def _answer(transcript: Transcript, pending: list[tuple[str, dict[str, Any]]], result: str) -> None:
    for name, arguments in pending:
        transcript.call(name, arguments, result)
    pending.clear()
