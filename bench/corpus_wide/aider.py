"""aider sessions as aider writes them (`.aider.chat.history.md`).

aider's documented history format: `# aider chat started at ...` opens a run, `#### `
lines are what the user typed, `> ` lines are what aider printed in the terminal (its
notices, warnings, API errors, command output), everything else is the model's answer.
aider gives the model no tools: its edits are text in the answer. Two of its terminal
notices name an action, and become a tool call so that the path or command is a fact:
`> Running CMD` with the lines it printed after it (`run_command`), and `> Applied edit
to PATH` (`edit_file`). aider never sends its other terminal lines to the model, so they
are left out. What the user typed is the user's, except its in-chat commands: an input
opening with `/` or `!` goes to `Commands.run` (`aider/commands.py`), which runs the command
itself (`/add`, `/drop`, `/undo`, an unknown one answered "Invalid command"), so the model
never sees the line; `/ask`, `/code`, `/architect` and `/context` send the words after the
command as the request, and those words stay.
"""

from __future__ import annotations

import re

from bench.corpus_wide.session import Transcript

_STARTED = re.compile(r"^# aider chat started at ")
_PROMPT = re.compile(r"\? \(Y\)es/\(N\)o")
# The commands whose words aider sends to the model as the request (a mode switch, then
# the message): `cmd_ask`, `cmd_code`, `cmd_architect`, `cmd_context`.
_SENDING = re.compile(r"^/(?:ask|code|architect|context)\b\s*")


def convert(text: str) -> Transcript:
    transcript = Transcript()
    kind, lines = "", list[str]()
    for raw in [*text.splitlines(), "#### "]:
        line = raw.rstrip()
        if _STARTED.match(line):
            here, content = "notice", line
        elif line.startswith("#### ") or line == "####":
            here, content = "user", line[5:]
        elif line == ">" or line.startswith("> "):
            here, content = "notice", line[1:].strip()
        else:
            here, content = "model", line
        if here != kind or (here == "notice" and _starts_action(content)):
            _flush(transcript, kind, lines)
            kind, lines = here, []
        lines.append(content)
    return transcript


def _starts_action(line: str) -> bool:
    return line.startswith(("Running ", "Applied edit to "))


def _flush(transcript: Transcript, kind: str, lines: list[str]) -> None:
    text = "\n".join(lines).strip()
    if not text:
        return
    if kind == "user":
        transcript.user(_sent(text))
    elif kind == "model":
        transcript.say(text)
    elif lines[0].startswith("Running "):
        output = [line for line in lines[1:] if not _PROMPT.search(line)]
        transcript.call("run_command", {"command": lines[0][8:].strip()}, "\n".join(output))
    elif lines[0].startswith("Applied edit to "):
        transcript.call("edit_file", {"path": lines[0][16:].strip()}, lines[0])


def _sent(typed: str) -> str:
    """What aider sends of a user's input: an in-chat command's line is run by aider, not
    sent, but `/ask` and the other mode commands send the words after them."""
    if not typed.startswith(("/", "!")):
        return typed
    sending = _SENDING.match(typed)
    return typed[sending.end() :] if sending else ""
