"""Each converter on a small session written in its agent's documented export format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.corpus_wide import (
    aider,
    claude_console,
    gemini_console,
    gemini_markdown,
    roo_markdown,
    specstory,
    swe_agent,
)
from bench.corpus_wide.session import Transcript
from bench.replay_driver import violations_of

EXPORTS = Path(__file__).resolve().parents[2] / "data" / "agent_exports"
CONVERTERS: dict[str, Callable[[str], Transcript]] = {
    "specstory.md": specstory.convert,
    "aider.md": aider.convert,
    "roo.md": roo_markdown.convert,
    "claude_console.txt": claude_console.convert,
    "gemini_console.txt": gemini_console.convert,
    "gemini_share.md": gemini_markdown.convert,
    "swe_agent.traj": swe_agent.convert,
}


def converted(name: str) -> Transcript:
    return CONVERTERS[name]((EXPORTS / name).read_text(encoding="utf-8"))


def calls(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (b["name"], b["input"])
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]


@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_every_export_becomes_a_valid_list_in_both_shapes(name: str) -> None:
    transcript = converted(name)
    assert violations_of(transcript.anthropic(), "anthropic") == []
    assert violations_of(transcript.openai(), "openai") == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "specstory.md",
            [
                ("read_file", {"target_file": "src/dates.py"}),
                ("run_terminal_cmd", {"command": "python -m pytest tests/test_dates.py"}),
                ("edit_file", {"code_edit": "- month = int(parts[0])\n+ month = int(parts[1])"}),
            ],
        ),
        (
            "aider.md",
            [
                ("edit_file", {"path": "cli.py"}),
                ("run_command", {"command": "python cli.py --verbose"}),
            ],
        ),
        (
            "roo.md",
            [
                ("read_file", {"path": "config.toml"}),
                (
                    "apply_diff",
                    {
                        "path": "config.toml",
                        "diff": "<<<<<<< SEARCH\ntimeout = 30\n=======\n"
                        "timeout_s = 30\n>>>>>>> REPLACE",
                    },
                ),
            ],
        ),
        (
            "gemini_console.txt",
            [
                ("run_shell_command", {"command": "ruff check ."}),
                ("read_file", {"absolute_path": "app.py"}),
                ("replace", {"file_path": "app.py"}),
            ],
        ),
        ("gemini_share.md", [("run_shell_command", {"command": "git mv helper.go util.go"})]),
    ],
)
def test_tool_calls_keep_the_documented_tool_and_field(
    name: str, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    assert calls(converted(name).anthropic()) == expected


def test_claude_codes_console_gives_its_tools_and_flags_what_failed() -> None:
    messages = converted("claude_console.txt").anthropic()
    assert [name for name, _ in calls(messages)] == ["Bash", "Edit", "TodoWrite", "Bash"]
    assert messages[0] == {
        "role": "user",
        "content": "Make the tests pass, then commit.\nKeep the public API unchanged.",
    }
    flags = [
        b.get("is_error", False)
        for m in messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert flags == [True, False, False, True]
    # The user's words after the interrupted call join its result's message; thinking goes.
    assert messages[-2]["content"][-1] == {"type": "text", "text": "no commit yet"}
    assert "cursor key is missing" not in str(messages)


def test_aiders_edit_blocks_stay_in_the_models_text_and_its_notices_go() -> None:
    messages = converted("aider.md").anthropic()
    assert ">>>>>>> REPLACE" in messages[1]["content"][0]["text"]
    assert "Aider v0.86.2" not in str(messages)


def test_roo_codes_environment_details_stay_in_the_users_turn_after_the_result() -> None:
    messages = converted("roo.md").anthropic()
    result, harness = messages[2]["content"]
    assert result["content"].startswith("[read_file for 'config.toml'] Result:\n<file>")
    assert harness["text"].startswith("<environment_details>")


def test_the_openai_shape_has_no_error_flag() -> None:
    openai = converted("gemini_share.md").openai()
    assert openai[-1] == {
        "role": "tool",
        "tool_call_id": "toolu_0001",
        "content": "fatal: not under version control, source=helper.go",
    }


def test_swe_agents_history_leaves_out_its_system_prompt_and_demonstration() -> None:
    """Function-calling and bash-action turns both become calls answered by the observation."""
    messages = converted("swe_agent.traj").anthropic()
    assert messages[0] == {
        "role": "user",
        "content": "We're currently solving the following issue within our repository. Here's "
        "the issue text:\nISSUE:\nparse_date drops the timezone\n\nINSTRUCTIONS: ...",
    }
    assert calls(messages) == [
        ("create", {"filename": "reproduce.py"}),
        ("bash", {"command": "python reproduce.py"}),
    ]
    results = [b for m in messages for b in m["content"] if isinstance(m["content"], list)]
    outputs = [b["content"] for b in results if b["type"] == "tool_result"]
    assert outputs == [
        "[File: reproduce.py (1 lines total)]\n1:",
        'Traceback (most recent call last):\n  File "reproduce.py", line 3, in <module>\n'
        "ValueError: naive datetime",
    ]
    assert not any(b.get("is_error") for b in results)
    # The last action (`submit` ends the run) has no observation: it stays the model's text.
    assert messages[-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "The fix is in place."}],
    }


def test_aiders_in_chat_commands_are_run_by_aider_and_only_ask_and_code_send_their_words() -> None:
    """aider's `Commands.run` takes every input opening with `/` or `!`: the model sees the
    words of `/ask`, `/code`, `/architect` and `/context`, and nothing of the others."""
    history = (
        "# aider chat started at 2025-01-02 10:00:00\n\n"
        "#### /add src/cli.py  \n"
        "> Added src/cli.py to the chat  \n\n"
        "#### /grep parser  \n"
        "> Invalid command: /grep  \n\n"
        "#### !ls  \n\n"
        "#### /ask why does --verbose fail?  \n\n"
        "Because the parser is built after parse_args.\n\n"
        "#### now fix it  \n\n"
        "Done.\n"
    )
    assert aider.convert(history).anthropic() == [
        {"role": "user", "content": "why does --verbose fail?"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Because the parser is built after parse_args."}],
        },
        {"role": "user", "content": "now fix it"},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
