"""The project rules an agent sends in its messages, found as it writes them and carried
verbatim into a compaction's summary turn."""

from __future__ import annotations

from typing import Any

from app.core.proxy import carried, standing, standing_tokens
from tests.proxy.agents import claude_code_first, claude_md_reminder

AGENTS_MD = "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nUse bun.\n</INSTRUCTIONS>"
LEGACY = "<user_instructions>\n\nUse bun.\n\n</user_instructions>"
ENVIRONMENT = "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"
TODO = "<system-reminder>\nThe todo list is empty.\n</system-reminder>"


def _user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def test_claude_code_s_claude_md_reminder_is_standing_its_other_reminders_are_not() -> None:
    first = claude_code_first("Fix the build.")
    later = _user([{"type": "text", "text": TODO}, {"type": "text", "text": "Go on."}])
    assert standing([first, later]) == [claude_md_reminder()]
    # The section as other versions of Claude Code write it, inside a longer text.
    tagged = (
        '<system-reminder>\n<context name="claudeMd">Codebase and user instructions are'
        " shown below. Be sure to adhere to these instructions.\n\nContents of"
        " /w/CLAUDE.md (project instructions, checked into the codebase):\n\nUse bun.\n"
        "</context>\n</system-reminder>"
    )
    assert standing([_user(f"{tagged}\nFix the build.")]) == [tagged]


def test_codex_s_instructions_and_environment_are_standing_in_any_shape() -> None:
    """Chat Completions strings, Responses `input_text` blocks, a span inside a text."""
    messages = [
        _user(AGENTS_MD),
        _user([{"type": "input_text", "text": LEGACY}, {"type": "input_text", "text": "Hi."}]),
        _user(f"Before.\n{ENVIRONMENT}\nAfter."),
        _user(AGENTS_MD),  # once
        {"role": "assistant", "content": ENVIRONMENT.replace("/w", "/elsewhere")},
    ]
    assert standing(messages) == [AGENTS_MD, LEGACY, ENVIRONMENT]


def test_an_unclosed_span_is_not_standing() -> None:
    assert standing([_user("<environment_context>\n  <cwd>/w</cwd>")]) == []


def test_standing_tokens_are_the_rules_share_of_the_message() -> None:
    message = _user([{"type": "text", "text": ENVIRONMENT}, {"type": "text", "text": "x" * 60}])
    assert len(ENVIRONMENT) == 60
    assert standing_tokens(message, 100) == 50
    assert standing_tokens({"role": "assistant", "content": ENVIRONMENT}, 100) == 0


def test_the_rules_open_the_summary_turn_as_sent_once() -> None:
    summary = [_user("[Conversation compressed]\n..."), {"role": "assistant", "content": "Ok."}]
    assert carried([AGENTS_MD, ENVIRONMENT], [], summary) == [
        _user(
            [
                {"type": "text", "text": AGENTS_MD},
                {"type": "text", "text": ENVIRONMENT},
                {"type": "text", "text": "[Conversation compressed]\n..."},
            ]
        ),
        summary[1],
    ]
    # Already kept (pinned) or already in the summary: not again.
    assert carried([AGENTS_MD], [_user(AGENTS_MD)], summary) == summary
    again = carried([AGENTS_MD], [], summary)
    assert carried([AGENTS_MD], [], again) == again


def test_a_responses_summary_gets_input_text_and_one_without_a_user_turn_gets_one() -> None:
    summary = [_user([{"type": "input_text", "text": "Summary."}])]
    assert carried([LEGACY], [], summary) == [
        _user([{"type": "input_text", "text": LEGACY}, {"type": "input_text", "text": "Summary."}])
    ]
    ack = [{"role": "assistant", "content": "Ok."}]
    assert carried([LEGACY], [], ack) == [_user([{"type": "text", "text": LEGACY}]), *ack]
