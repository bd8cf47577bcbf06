from __future__ import annotations

from app.core.compact_json import compact_json
from app.core.summary.prompt import (
    ARCHIVED_HEADINGS,
    ARCHIVED_RULE,
    ARCHIVED_TEMPLATE,
    ARCHIVED_TITLE,
    build_archived_prompt,
)


def test_the_archived_headings_are_pinned_byte_for_byte() -> None:
    # The archived-summary template's headings are part of the summary format that agents,
    # people and tools read and search: these exact lines, emoji and the variation selector
    # after the building emoji included. A changed character is a breaking change.
    assert ARCHIVED_TITLE == "## 📌 Archived Session Summary"
    assert ARCHIVED_HEADINGS == (
        "### 🎯 Objectives & Status",
        "### 🏗️ Technical Context (Static)",
        '### ✅ Completed Milestones (The "Done" Pile)',
        "### 🧠 Key Insights & Decisions (Persistent Memory)",
        "### 📂 File System State (Snapshot)",
    )
    assert "### 🏗\ufe0f Technical" in ARCHIVED_HEADINGS[1]


def test_the_archived_prompt_asks_for_the_template_with_the_word_limit_and_focus() -> None:
    prompt = build_archived_prompt("[user]\nhi", 300, "the parser")
    assert prompt == (
        "Summarize the older part of a conversation below for the archive. Fill in exactly "
        "this template, keeping its headings (with their emoji) as they are, and output only "
        f"the filled-in template:\n\n{ARCHIVED_TEMPLATE}\n\n{ARCHIVED_RULE}\n\n"
        "Keep the summary under 300 words.\n\n"
        "Additional instructions from the user for this summary:\nthe parser\n\n"
        "<conversation>\n[user]\nhi\n</conversation>"
    )
    assert all(heading in ARCHIVED_TEMPLATE for heading in ARCHIVED_HEADINGS)


def test_a_long_tool_result_reaches_an_llm_clipped_to_its_beginning_and_end() -> None:
    from app.core.messages import Message
    from app.core.summary.prompt import CLIP_CHARS, clipped, serialize_for_summary

    output = "a" * 800 + "b" * 500 + "c" * 300
    assert clipped(output) == "a" * 800 + "\n[... 500 characters left out ...]\n" + "c" * 300
    assert clipped("x" * CLIP_CHARS) == "x" * CLIP_CHARS
    messages = [
        Message.model_validate(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": output}],
            }
        )
    ]
    assert (
        serialize_for_summary(messages, clip=True)
        == f"[user]\n[tool result id=t1]\n{clipped(output)}"
    )
    # The summary check and the chunk sizes read the whole result.
    assert serialize_for_summary(messages) == f"[user]\n[tool result id=t1]\n{output}"


def test_a_clipped_result_keeps_the_failure_line_it_would_leave_out_in_its_note() -> None:
    from app.core.summary.prompt import clipped

    lines = [f"tests/test_{n}.py::test_case PASSED" for n in range(60)]
    middle = "E   KeyError: 'session_id'"
    output = "\n".join([*lines[:30], "Traceback (most recent call last):", middle, *lines[30:]])
    kept = clipped(output)
    assert "KeyError: 'session_id'" not in output[:800] + output[-300:]
    assert "; among them: E   KeyError: 'session_id' ...]\n" in kept
    # A result whose failure stays in view, or that names none, gets the plain note.
    assert "among them" not in clipped("x" * 2000)
    tail_error = "ok\n" * 600 + "RuntimeError: boom"
    assert "among them" not in clipped(tail_error)


def test_a_call_s_long_argument_reaches_an_llm_clipped_and_its_short_ones_whole() -> None:
    from app.core.messages import Message
    from app.core.summary.prompt import serialize_for_summary

    # A test file written whole: the exception it expects is no failure of the call.
    content = "x = 1\n" * 150 + "    raise AssertionError('expected')\n" + "y = 2\n" * 150
    call = {
        "type": "tool_use",
        "id": "t1",
        "name": "Write",
        "input": {"file_path": "tests/test_a.py", "content": content, "lines": [1, 2]},
    }
    messages = [Message.model_validate({"role": "assistant", "content": [call]})]
    left = len(content) - 800 - 300
    shown = content[:800] + f"\n[... {left} characters left out ...]\n" + content[-300:]
    arguments = {"file_path": "tests/test_a.py", "content": shown, "lines": [1, 2]}
    assert serialize_for_summary(messages, clip=True) == (
        f"[assistant]\n[tool call Write id=t1] {compact_json(arguments)}"
    )
    # The summary check and the chunk sizes read the call whole.
    assert content.replace("\n", "\\n") in serialize_for_summary(messages)
