"""Requests shaped as real agents send them, for the proxy's tests.

aider (`aider/coders/base_coder.py`, `format_chat_chunks`; `chat_chunks.py`,
`ChatChunks.all_messages`) rebuilds every request from its parts: the system prompt, the
repository map as a user/assistant pair, the chat history (`done`), the files added to the
chat with their current contents as a user/assistant pair, the current messages, and the
edit-format reminder as a trailing system message (`reminder: sys`). The texts are aider's
own (`base_prompts.py`). Claude Code sends the project's CLAUDE.md in a `<system-reminder>`
text block of the conversation's first user message, ahead of the user's words.
"""

from __future__ import annotations

from typing import Any

AIDER_SYSTEM = (
    "Act as an expert software developer.\n"
    "Always use best practices when coding.\n"
    "Respect and use existing conventions, libraries, etc that are already present in the"
    " code base.\n"
    "Take requests for changes to the supplied code.\n"
    "If the request is ambiguous, ask questions.\n"
)
AIDER_REMINDER = (
    "# *SEARCH/REPLACE block* Rules:\n\n"
    "Every *SEARCH/REPLACE block* must use this format:\n"
    "1. The *FULL* file path alone on a line, verbatim.\n"
)
REPO_PREFIX = (
    "Here are summaries of some files present in my git repository.\n"
    "Do not propose changes to these files, treat them as *read-only*.\n"
    "If you need to edit any of these files, ask me to *add them to the chat* first.\n"
)
REPO_REPLY = "Ok, I won't try and edit those files without asking first."
FILES_PREFIX = (
    "I have *added these files to the chat* so you can go ahead and edit them.\n\n"
    "*Trust this message as the true contents of these files!*\n"
    "Any other messages in the chat may contain outdated versions of the files' contents.\n"
)
FILES_REPLY = "Ok, any changes I propose will be to those files."
READ_ONLY_PREFIX = (
    "Here are some READ ONLY files, provided for your reference.\nDo not edit these files!\n"
)
READ_ONLY_REPLY = "Ok, I will use these files as references."


def aider_files(files: dict[str, str], prefix: str = FILES_PREFIX) -> str:
    """aider's `get_files_content`: each file's name, then its content fenced."""
    text = prefix
    for name, content in files.items():
        text += f"\n{name}\n```\n{content}```\n"
    return text


def aider_request(
    done: list[dict[str, Any]],
    cur: list[dict[str, Any]],
    files: dict[str, str],
    repo_map: str,
    conventions: str | None = None,
) -> list[dict[str, Any]]:
    """One of aider's requests (Chat Completions shape): `all_messages()` in its order."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": AIDER_SYSTEM}]
    if conventions is not None:
        messages += [
            {
                "role": "user",
                "content": aider_files({"CONVENTIONS.md": conventions}, READ_ONLY_PREFIX),
            },
            {"role": "assistant", "content": READ_ONLY_REPLY},
        ]
    messages += [
        {"role": "user", "content": REPO_PREFIX + repo_map},
        {"role": "assistant", "content": REPO_REPLY},
        *done,
        {"role": "user", "content": aider_files(files)},
        {"role": "assistant", "content": FILES_REPLY},
        *cur,
        {"role": "system", "content": AIDER_REMINDER},
    ]
    return messages


def aider_ask(i: int) -> dict[str, Any]:
    """The user's request of turn `i`: aider's `cur` while it is answered."""
    return {"role": "user", "content": f"Step {i}: add the value computations to parser.py."}


def aider_turn(i: int, size: int) -> list[dict[str, Any]]:
    """Turn `i` finished, as aider's `done` keeps it: the request, the reply with an edit,
    and the commit notice aider adds after applying it (`move_back_cur_messages`)."""
    edit = "".join(f"    value_{i}_{n} = compute({n})\n" for n in range(size))
    return [
        aider_ask(i),
        {
            "role": "assistant",
            "content": f"parser.py\n```\n<<<<<<< SEARCH\n=======\n{edit}>>>>>>> REPLACE\n```",
        },
        {
            "role": "user",
            "content": f"I committed the changes with git hash a{i:06d} & commit msg: step {i}",
        },
        {"role": "assistant", "content": "Ok."},
    ]


CLAUDE_MD = (
    "# Project rules\n\n"
    "- Never edit generated files under gen/.\n"
    "- Run `make check` before any commit.\n"
)


def claude_md_reminder(rules: str = CLAUDE_MD, path: str = "/home/dev/proj/CLAUDE.md") -> str:
    """Claude Code's context reminder carrying CLAUDE.md, as its first user message opens."""
    return (
        "<system-reminder>\n"
        "As you answer the user's questions, you can use the following context:\n"
        "# claudeMd\n"
        "Codebase and user instructions are shown below. Be sure to adhere to these"
        " instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you"
        " MUST follow them exactly as written.\n\n"
        f"Contents of {path} (project instructions, checked into the codebase):\n\n"
        f"{rules}\n"
        "# currentDate\nToday's date is 2026-12-07.\n\n"
        "      IMPORTANT: this context may or may not be relevant to your tasks. You should"
        " not respond to this context unless it is highly relevant to your task.\n"
        "</system-reminder>\n"
    )


def claude_code_first(request: str) -> dict[str, Any]:
    """Claude Code's first user message: the CLAUDE.md reminder, then the user's words."""
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": claude_md_reminder()},
            {"type": "text", "text": request},
        ],
    }
