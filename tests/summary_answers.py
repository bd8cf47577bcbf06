"""One conversation, real summaries of it, and answers an LLM gave instead of a summary:
the material of the summary check's tests (core, API and jobs alike)."""

from __future__ import annotations

from typing import Any

from app.core.ports import SummaryRequest
from app.core.summary.prompt import (
    ARCHIVED_TEMPLATE,
    SUMMARY_SYSTEM,
    build_archived_prompt,
    build_summary_prompt,
    serialize_for_summary,
)
from tests.builders import assistant, parse, system, tool_result, tool_use, user

PARSER = "def parse(text):\n    return yaml.safe_load(text)\n"
PYTEST_OUTPUT = (
    "FAILED tests/test_parser.py::test_parse_empty - ModuleNotFoundError: No module named "
    "'yaml'\n" + "".join(f"tests/test_parser.py::test_case_{i:03d} PASSED\n" for i in range(80))
)
CONVERSATION: list[dict[str, Any]] = [
    system("You are a coding agent."),
    user(
        "Fix the failing parser tests in src/parser.py. The chat bot must answer off-topic "
        "questions with \"I'm sorry, I can't help with that.\" and nothing else."
    ),
    assistant("Reading the parser.", tool_use("read_file", "t1", path="src/parser.py")),
    tool_result("t1", PARSER),
    assistant(
        "Running the tests.", tool_use("bash", "t2", command="pytest -q tests/test_parser.py")
    ),
    tool_result("t2", PYTEST_OUTPUT, is_error=True),
    assistant("Checking the mirror.", tool_use("bash", "t3", command="pip install pyyaml")),
    tool_result("t3", "Error: 503 Service Unavailable from the package mirror", is_error=True),
    assistant("Installed pyyaml from the second mirror; all parser tests pass now."),
]

SUMMARY = """## Goals & Decisions
- Fix the failing parser tests in `src/parser.py`; off-topic questions get a fixed reply.
## File Operations
- Read `src/parser.py` (it calls `yaml.safe_load`).
## Tool Calls
- `pytest -q tests/test_parser.py`: test_parse_empty failed with ModuleNotFoundError.
- `pip install pyyaml`: the first mirror answered `Error: 503 Service Unavailable`.
## Task Status
- Done: pyyaml installed from the second mirror, all parser tests pass.
## Errors & Resolutions
- ModuleNotFoundError for yaml: resolved by installing pyyaml.
"""

ARCHIVED = """## 📌 Archived Session Summary
### 🎯 Objectives & Status
* **Original Goal**: fix the failing parser tests in `src/parser.py`.
### 🏗️ Technical Context (Static)
* **Stack**: Python with pytest and pyyaml.
### ✅ Completed Milestones (The "Done" Pile)
* [✓] installed pyyaml - the parser tests pass.
### 🧠 Key Insights & Decisions (Persistent Memory)
* **Learnings**: the first package mirror answered 503 Service Unavailable.
### 📂 File System State (Snapshot)
* `src/parser.py`: read, unchanged.
"""

# Headings of each template, by the styles models write them in.
SECTION_TITLES = (
    "Goals & Decisions",
    "File Operations",
    "Tool Calls",
    "Task Status",
    "Errors & Resolutions",
)


def request(template: str = "sections", instructions: str | None = None) -> SummaryRequest:
    """The summarizer's request for `CONVERSATION`, as the service builds it."""
    messages = parse(CONVERSATION[1:])
    build = build_archived_prompt if template == "archived" else build_summary_prompt
    return SummaryRequest(
        messages=tuple(messages),
        system=SUMMARY_SYSTEM,
        prompt=build(serialize_for_summary(messages), 1200, instructions),
        max_words=1200,
        instructions=instructions,
        template=template,  # type: ignore[arg-type]
    )


def under_every_heading(body: str) -> str:
    return "\n".join(f"## {title}\n{body}" for title in SECTION_TITLES)


LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
    "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud "
    "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat."
)
PROMPT = request().prompt
INSTRUCTIONS = PROMPT.split("<conversation>")[0]

# The answers of issue 24, item 1, each with the reason it fails.
ISSUE_ANSWERS: dict[str, tuple[str, str]] = {
    "refusal-under-heading": (
        "## Goals & Decisions\nI'm sorry, but I can't help with that request.",
        "refusal",
    ),
    "refusal-under-every-heading": (
        under_every_heading("I'm sorry, but I can't help with that request."),
        "refusal",
    ),
    "chinese-refusal-under-task-status": (
        SUMMARY.replace(
            "- Done: pyyaml installed from the second mirror, all parser tests pass.",
            "抱歉，我无法帮助总结这段对话。",
        ),
        "refusal",
    ),
    "bold-heading-cannot-summarize": (
        "**Task Status**\nI cannot summarize this conversation…",
        "refusal",
    ),
    "upstream-error": (
        "Upstream request failed.\nErrors:\n- model overloaded, try again later",
        "error_message",
    ),
    "instructions-echoed": (INSTRUCTIONS, "echo"),
    "whole-prompt-echoed": (PROMPT, "echo"),
    "archived-template-echoed": (ARCHIVED_TEMPLATE, "echo"),
    "lorem-under-headings": (under_every_heading(LOREM), "filler"),
    "one-word-repeated": ("## Goals & Decisions\n" + "the " * 2000, "repetitive"),
    "headings-only": (under_every_heading(""), "empty_sections"),
    "zero-width-space": ("## Goals & Decisions\n\u200b", "missing_sections"),
    "think-wraps-headings": ("<think>\n" + SUMMARY + "</think>", "reasoning_only"),
    "unclosed-think": ("<think>\nThe user wants a summary. " + SUMMARY, "reasoning_only"),
    "template-leak": (
        "<|im_start|>assistant\n## Goals & Decisions\n<|im_end|>",
        "missing_sections",
    ),
}
