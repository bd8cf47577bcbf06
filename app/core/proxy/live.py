"""The messages an agent rebuilds for every request: live state, not history.

aider makes each request anew from its parts (`ChatChunks.all_messages`): its example
conversation, the read-only files (a conventions file among them), the repository map and
the files added to the chat with their current contents, each a user message with aider's
own reply, and its edit-format reminder as a system message after the conversation. Their
contents change from turn to turn (an edited file, a map that follows the request) and
they move as the history grows between them. Such a message is sent as it is in every
request and never summarized: what it says is true now, a summary of it would be stale.
The rest, the history, is what a session is keyed by and a head stands for (`split`), and
the live messages go back in where the agent put them (`Split.restore`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.proxy.splice import Head, JsonDict

# The user messages that open aider's rebuilt pairs, from each of its coders' prompts
# (`files_content_prefix`, `files_no_full_files*`, `repo_content_prefix`,
# `read_only_files_prefix`) and its images message, and the replies aider writes after them.
_AIDER_OPENINGS = (
    "I have *added these files to the chat*",
    "These files have been *added these files to the chat*",
    "Here is the current content of the file",
    "These are some files we have been discussing that we may want to edit",
    "I am not sharing any files",
    "I am not sharing the full contents of any files with you yet.",
    "Don't try and edit any existing code without asking me to add the files to the chat!",
    "Here are summaries of some files present in my git repository.",
    "I am working with you on code in a git repository.\nHere are summaries of some files",
    "Below here are summaries of other files!",
    "Here are some READ ONLY files, provided for your reference.",
    "Image file: ",
    "PDF file: ",
)
# What ends aider's example conversation, ahead of every pair above.
_EXAMPLES_END = "I switched to a new code base. Please don't consider the above files"
_AIDER_REPLIES = frozenset(
    {
        "Ok, I won't try and edit those files without asking first.",
        "Ok, I will use these files as references.",
        "Ok, I will use these images as references.",
        "Ok, any changes I propose will be to those files.",
        "Ok, I will use that as the true, current contents of the files.",
        "Ok, based on your requests I will suggest which files need to be edited and then"
        " stop and wait for your approval.",
        "Ok.",
    }
)
_SYSTEM = frozenset({"system", "developer"})


def text_of(message: Mapping[str, Any]) -> str:
    """A message's text: its string content, or its text blocks joined."""
    return content_text(message.get("content"))


def content_text(content: Any) -> str:
    """A content's text (a message's, or a top-level `system`): the string, or its text
    blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)
    )


def live_indices(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """The indices of the live messages: aider's rebuilt pairs (the user message and its
    reply; its examples, which end with "I switched to a new code base", from the start),
    and the system messages after the conversation began (aider's reminder)."""
    found: list[int] = []
    began = False
    for index, message in enumerate(messages):
        role = message.get("role")
        if role in _SYSTEM:
            if began:
                found.append(index)
            continue
        began = True
        text = text_of(message)
        examples = not found and text.startswith(_EXAMPLES_END)
        if role != "user" or not (examples or text.startswith(_AIDER_OPENINGS)):
            continue
        reply = index + 1
        if reply < len(messages) and messages[reply].get("role") == "assistant":
            if text_of(messages[reply]) not in _AIDER_REPLIES:
                continue
            if examples:
                found.extend(i for i in range(index) if messages[i].get("role") not in _SYSTEM)
            found += [index, reply]
    return sorted(set(found))


@dataclass(frozen=True)
class Split:
    """A request's messages as history (`history`) and live messages (`live`), each of
    those with the number of history messages before it: where it goes back."""

    history: list[JsonDict]
    live: tuple[tuple[int, JsonDict], ...]

    def restore(self, sent: Sequence[JsonDict], head: Head | None) -> list[JsonDict]:
        """`sent` (the history as sent: `head`'s messages, then the history after what it
        replaced) with the live messages put back: each before the history message it
        preceded, or where that one was replaced, right after the head; one before the
        pinned messages or the head's start stays there."""
        out: list[JsonDict] = []
        pending = list(self.live)
        for position, message in enumerate(sent):
            while pending and _position(pending[0][0], head) <= position:
                out.append(pending.pop(0)[1])
            out.append(message)
        out.extend(message for _, message in pending)
        return out


def _position(anchor: int, head: Head | None) -> int:
    if head is None or anchor <= head.pinned:
        return anchor
    return len(head.messages) + max(0, anchor - head.replaced)


def split(messages: Sequence[JsonDict]) -> Split:
    """`messages` as history and live messages."""
    live = set(live_indices(messages))
    history: list[JsonDict] = []
    placed: list[tuple[int, JsonDict]] = []
    for index, message in enumerate(messages):
        if index in live:
            placed.append((len(history), message))
        else:
            history.append(message)
    return Split(history, tuple(placed))
