"""The user's own words in a user message, without what the agent's harness put there.

Agent harnesses write into user messages: Cline appends `<environment_details>` to every
turn, sends tool results as user text (`[read_file for 'x'] Result:`) and nags ("# TODO
LIST UPDATE REQUIRED"); Claude Code adds `<system-reminder>` blocks and local command
output; Cursor wraps the request in `<user_query>`. None of that is the user speaking, so
none of it may become "the latest request" or an instruction. Wrappers that hold the
user's words (`<task>`, `<user_query>`, `<feedback>`, `<user_message>`, `<answer>`) are
unwrapped; when a block has them, only their content counts.
"""

from __future__ import annotations

import re

from app.core.messages import Message, TextBlock, is_tool_result_message

_HARNESS_TAGS = (
    "environment_details",
    "system-reminder",
    "system_reminder",
    "automated_reminder_from_anthropic",
    "local-command-stdout",
    "local-command-stderr",
    "command-name",
    "command-message",
    "command-args",
    "ide_opened_file",
    "ide_selection",
    "user-prompt-submit-hook",
    "attached_files",
    "additional_data",
    "env",
)
_WRAPPERS = ("task", "user_query", "user_message", "feedback", "answer", "user_request")
_HARNESS_BLOCK = re.compile(
    rf"<({'|'.join(map(re.escape, _HARNESS_TAGS))})(?:\s[^>]*)?>.*?(?:</\1>|\Z)", re.DOTALL
)
_WRAPPED = re.compile(
    rf"<({'|'.join(_WRAPPERS)})(?:\s[^>]*)?>(.*?)(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE
)
# Cline's tool results arrive as user text: `[tool_name for 'arg'] Result:`.
_TOOL_RESULT_HEADER = re.compile(r"^\s*\[[^\]\n]{1,300}\] Result:")
# Lines that start text the harness wrote; everything from them to the block's end goes.
_HARNESS_OPENERS = re.compile(
    r"^(?:#+ TODO LIST UPDATE REQUIRED|\[TASK RESUMPTION\]|\[ERROR\] You did not use a tool"
    r"|# Reminder: Instructions for Tool Use|Caveat: The messages below were generated"
    r"|\[Request interrupted by user|<environment_details>)",
    re.MULTILINE,
)


def block_words(text: str) -> str:
    """The user's words in one text block ('' when the harness wrote all of it)."""
    wrapped = [m.group(2).strip() for m in _WRAPPED.finditer(text)]
    if wrapped:
        return "\n\n".join(w for w in wrapped if w)
    if _TOOL_RESULT_HEADER.match(text):
        return ""
    text = _HARNESS_BLOCK.sub("", text)
    opener = _HARNESS_OPENERS.search(text)
    if opener is not None:
        text = text[: opener.start()]
    return text.strip()


def user_words(message: Message) -> str:
    """What the user said in this message: '' for assistant messages, tool results and
    text only the harness wrote."""
    if message.role != "user" or is_tool_result_message(message):
        return ""
    if isinstance(message.content, str):
        return block_words(message.content)
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    if texts and _TOOL_RESULT_HEADER.match(texts[0]):
        # A tool result sent as user text: its later blocks are the output, the user's
        # words only what the harness wrapped as theirs (feedback, an answer).
        wrapped = [m.group(2).strip() for t in texts for m in _WRAPPED.finditer(t)]
        return "\n\n".join(w for w in wrapped if w)
    parts = [block_words(text) for text in texts]
    return "\n\n".join(p for p in parts if p).strip()
