"""The summarization prompt, and the transcript form of the messages it summarizes.

The prompt asks for five sections and states the "MOST RECENT messages" rule, the word
limit, and the caller's optional focus (like `/compact <focus>`). Earlier summaries and
restored files inside the rest are ordinary messages here, so they are summarized again:
a new summary covers everything an earlier one did.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.core.compact_json import compact_json
from app.core.history import error_line
from app.core.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    tool_result_text,
)

DEFAULT_MAX_SUMMARY_WORDS = 1200

MOST_RECENT_RULE = (
    "Pay special attention to the MOST RECENT messages — summarize the current task state, "
    "what was just done, and what the next logical step should be. This information is "
    "critical because the original recent messages will NOT be preserved."
)

SUMMARY_SYSTEM = (
    "You are a context compaction assistant. You summarize the history of a conversation "
    "between a user and an AI coding agent so that the agent can continue the work from "
    "your summary alone. Be precise: keep file paths, identifiers, commands, error "
    "messages and decisions exactly as they appear."
)

DIMENSIONS = (
    (
        "Goals & Decisions",
        "The user's goals and requests, and the decisions taken with their reasons.",
    ),
    (
        "File Operations",
        "Every file read, created, modified or deleted, with its path and what changed.",
    ),
    (
        "Tool Calls",
        "The important tool calls and commands, with their key results.",
    ),
    (
        "Task Status",
        "What is done, what is in progress and what remains. Describe in detail the "
        "operation in progress in the most recent exchange and the planned next step.",
    ),
    (
        "Errors & Resolutions",
        "Errors met, how each was resolved, and approaches that failed.",
    ),
)


# The template of the `tail` strategy's archived summary (headings verbatim).
ARCHIVED_TITLE = "## \U0001f4cc Archived Session Summary"
ARCHIVED_HEADINGS = (
    "### \U0001f3af Objectives & Status",
    "### \U0001f3d7\ufe0f Technical Context (Static)",
    '### \u2705 Completed Milestones (The "Done" Pile)',
    "### \U0001f9e0 Key Insights & Decisions (Persistent Memory)",
    "### \U0001f4c2 File System State (Snapshot)",
)
MODIFIED_FILES_NOTE = "*(Modified files in this archive segment)*"
ARCHIVED_TEMPLATE = "\n".join(
    (
        ARCHIVED_HEADINGS[0],
        "* **Original Goal**: [what the user first wanted to do]",
        "",
        ARCHIVED_HEADINGS[1],
        "* **Stack**: [languages, frameworks, versions]",
        "* **Environment**: [OS, shell, key environment variables]",
        "",
        ARCHIVED_HEADINGS[2],
        "* [\u2713] [completed task 1] - [its result in brief]",
        "* [\u2713] [completed task 2] - [its result in brief]",
        "",
        ARCHIVED_HEADINGS[3],
        "* **Decisions**: [key technical choices, and approaches abandoned]",
        "* **Learnings**: [special configuration, API formats, pitfalls]",
        "* **User Preferences**: [habits the user insisted on]",
        "",
        ARCHIVED_HEADINGS[4],
        MODIFIED_FILES_NOTE,
        "* `path/of/file`: [what changed]",
    )
)
ARCHIVED_RULE = (
    "This summary ARCHIVES OLD history: the most recent rounds of the conversation are kept "
    "verbatim after it, so do not describe the task in progress; record what was done and "
    "what must be remembered."
)


def build_archived_prompt(
    transcript: str, max_words: int = DEFAULT_MAX_SUMMARY_WORDS, instructions: str | None = None
) -> str:
    """The user prompt of the `tail` strategy's summary call."""
    return (
        "Summarize the older part of a conversation below for the archive. Fill in exactly "
        "this template, keeping its headings (with their emoji) as they are, and output only "
        f"the filled-in template:\n\n{ARCHIVED_TEMPLATE}\n\n{ARCHIVED_RULE}\n\n"
        f"Keep the summary under {max_words} words.{_focus(instructions)}\n\n"
        f"<conversation>\n{transcript}\n</conversation>"
    )


def _focus(instructions: str | None) -> str:
    if instructions and instructions.strip():
        heading = "Additional instructions from the user for this summary:"
        return f"\n\n{heading}\n{instructions.strip()}"
    return ""


def build_summary_prompt(
    transcript: str, max_words: int = DEFAULT_MAX_SUMMARY_WORDS, instructions: str | None = None
) -> str:
    """The user prompt of the summarization call."""
    sections = "\n".join(
        f"{i}. ## {title}: {what}" for i, (title, what) in enumerate(DIMENSIONS, start=1)
    )
    focus = (
        f"\n\nAdditional instructions from the user for this summary:\n{instructions.strip()}"
        if instructions and instructions.strip()
        else ""
    )
    return (
        "Summarize the conversation below. Structure the summary in exactly these five "
        f"sections, each as a markdown heading:\n{sections}\n\n"
        f"{MOST_RECENT_RULE}\n\n"
        f"Keep the summary under {max_words} words. Output only the summary.{focus}\n\n"
        f"<conversation>\n{transcript}\n</conversation>"
    )


# A tool result longer than CLIP_CHARS reaches an LLM summarizer as its first CLIP_HEAD and
# last CLIP_TAIL characters (`serialize_for_summary(..., clip=True)`): the summary needs
# what a file or an output was, the command's verdict at its end and any error, not every
# line of it. The agent has the files it read restored after a compaction, and the
# service's ledger and facts are read from the whole messages, so nothing they keep is
# lost; the summarizer reads each turn once, and the large tool results are most of it.
# A tool call's long string arguments (a file written whole, a long script) are clipped
# the same way: the file is on disk, the agent has those it read last restored, and the
# ledger names the path and what was done to it.
CLIP_CHARS = 1200
CLIP_HEAD = 800
CLIP_TAIL = 300


def clipped(text: str, is_error: bool | None = False, output: bool = True) -> str:
    """`text`, its middle left out (with a note of how much) past `CLIP_CHARS`. When the
    line that names the result's failure (`error_line`) lies in the part left out, the
    note carries it: a test run's traceback or a build's first error sits mid-output as
    often as at its end, and a summary that never saw it would tell the run as clean.
    `output` False: a call's argument, which states no failure of its own (a test file
    written whole names exceptions it expects)."""
    if len(text) <= CLIP_CHARS:
        return text
    left = len(text) - CLIP_HEAD - CLIP_TAIL
    note = f"\n[... {left} characters left out ...]\n"
    failure = error_line(text, is_error) if output else None
    if failure and failure not in text[:CLIP_HEAD] and failure not in text[-CLIP_TAIL:]:
        failure = failure[: CLIP_HEAD // 2]
        note = f"\n[... {left} characters left out; among them: {failure} ...]\n"
    return f"{text[:CLIP_HEAD]}{note}{text[-CLIP_TAIL:]}"


def _block_transcript(block: ContentBlock, clip: bool = False) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ThinkingBlock):
        return f"[thinking]\n{block.thinking}"
    if isinstance(block, RedactedThinkingBlock):
        return "[redacted thinking]"
    if isinstance(block, ToolUseBlock):
        arguments = _clipped_arguments(block.input) if clip else block.input
        return f"[tool call {block.name} id={block.id}] {compact_json(arguments)}"
    if isinstance(block, ToolResultBlock):
        status = " (error)" if block.is_error else ""
        text = tool_result_text(block)
        shown = clipped(text, block.is_error) if clip else text
        return f"[tool result id={block.tool_use_id}{status}]\n{shown}"
    if isinstance(block, ImageBlock):
        return "[image]"
    return f"[{block.type} block]"


def _clipped_arguments(value: Any) -> Any:
    """A call's arguments, each long string `clipped` (no failure looked for)."""
    if isinstance(value, str):
        return clipped(value, output=False)
    if isinstance(value, dict):
        return {key: _clipped_arguments(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clipped_arguments(item) for item in value]
    return value


# Where an answer has turned into a copy of the transcript (a small model re-typing the
# history): the server stops there instead of generating up to `max_tokens`. Four at
# most, OpenAI's own limit.
STOP_SEQUENCES = ("[tool call ", "[tool result id=", "\n[user]\n", "</conversation>")


def serialize_for_summary(messages: Sequence[Message], clip: bool = False) -> str:
    """A readable transcript: one `[role]` header per message, blocks in order; `clip`:
    long tool results clipped (`clipped`), as the prompt an LLM summarizer reads has them
    (the summary check and the chunk sizes read the whole transcript)."""
    parts: list[str] = []
    for message in messages:
        if isinstance(message.content, str):
            body = message.content
        else:
            body = "\n".join(_block_transcript(b, clip) for b in message.content)
        parts.append(f"[{message.role}]\n{body}")
    return "\n\n".join(parts)
