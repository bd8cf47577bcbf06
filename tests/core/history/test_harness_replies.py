"""The user's words where each harness wraps them, read from the harnesses' own sources
(Roo Code's `formatResponse` and tools, Cline's tool responses, Claude Code's rejection
message, Gemini CLI's `<session_context>` and steering input, aider's reflected messages,
OpenHands' context blocks): replies the harness hands back in a tool result are the user's
later requests; the text the harness writes around them is not."""

from __future__ import annotations

import pytest

from app.core.history.facts import extract_facts
from app.core.history.harness import block_words, result_words
from app.core.ledger.extract import Fact, extract_ledger
from app.core.messages import Message
from tests.builders import assistant, parse, tool_result, tool_use, user

REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
    "it was a file edit, the new_string was NOT written to the file). To tell you how to "
    "proceed, the user said:\nKeep the old function name."
)


def replied(text: str) -> Message:
    (message,) = parse([tool_result("t1", text)])
    return message


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # Roo Code: ask_followup_question's answer and attempt_completion's feedback
        ("<user_message>\nUse pnpm, not npm.\n</user_message>", "Use pnpm, not npm."),
        # Cline: feedback after a completion, an answer to a question
        (
            "The user has provided feedback on the results. Consider their input to continue "
            "the task, and then attempt completion again.\n<feedback>\nThe button is still "
            "blue.\n</feedback>",
            "The button is still blue.",
        ),
        ("<answer>\nThe staging database.\n</answer>", "The staging database."),
        # Roo Code: a refused call with the user's words, as JSON
        (
            '{"status":"denied","feedback":"Do not touch the lockfile."}',
            "Do not touch the lockfile.",
        ),
        ('{"status":"approved","feedback":"Also bump the version."}', "Also bump the version."),
        # Claude Code: a rejected call with what the user said
        (REJECTED, "Keep the old function name."),
        # nothing the user said
        ('{"status":"denied","message":"The user denied this operation."}', ""),
        ("The user doesn't want to proceed with this tool use. STOP what you are doing.", ""),
        ("line of a file\n" * 30 + "<feedback>quoted in the file</feedback>", ""),
    ],
)
def test_the_users_reply_in_a_tool_result(text: str, words: str) -> None:
    assert result_words(replied(text)) == words


def test_a_reply_in_a_tool_result_is_a_later_request_and_a_ledger_fact() -> None:
    messages = parse(
        [
            user("<task>\nMigrate the build to pnpm.\n</task>"),
            assistant(tool_use("ask_followup_question", "t1", question="Which workspace?")),
            tool_result("t1", "<user_message>\nOnly the web workspace.\n</user_message>"),
            assistant("Migrating the web workspace."),
        ]
    )
    facts = extract_facts(messages)
    assert facts.first_request == "Migrate the build to pnpm."
    assert facts.latest_request == "Only the web workspace."
    assert facts.spoken == ("Migrate the build to pnpm.", "", "Only the web workspace.", "")
    ledger = extract_ledger(messages, found=facts)
    assert Fact("request", "Only the web workspace.") in ledger


@pytest.mark.parametrize(
    "text",
    [
        # aider's reflected messages and notes in the user's turn
        "I ran this command:\n\npytest -q\n\nAnd got this output:\n\nFAILED tests/t.py::x",
        "# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This "
        "SEARCH block failed to exactly match lines in app.py",
        "# Fix any errors below, if possible.\n\n## Running: flake8 app.py\n\napp.py:1:1: F401",
        "I did `git reset --hard HEAD~1` to discard the last edits. Please wait for further "
        "instructions before attempting that change again.",
        "I have *added these files to the chat* so you can go ahead and edit them.",
        # Gemini CLI's setup and loop notice
        "<session_context>\nThis is the Gemini CLI. We are setting up the context for our "
        "chat.\nToday's date is Monday.\n</session_context>",
        "System: Potential loop detected. Details: Repetitive patterns identified.",
        # OpenHands' headless reply and its context blocks
        "Please continue working on the task on whatever approach you think is suitable.\n"
        "If you think you have solved the task, please first send your answer to user.",
        "<RUNTIME_INFORMATION>\nThe user has access to the following hosts:\n"
        "</RUNTIME_INFORMATION>",
    ],
)
def test_text_a_harness_wrote_in_the_users_turn_is_not_the_users(text: str) -> None:
    assert block_words(text) == ""


def test_the_users_words_beside_a_harness_block_stay() -> None:
    steering = (
        "User steering update:\n<user_input>\nStop using docker.\n</user_input>\n"
        "Internal instruction: Re-evaluate the active plan using this user steering update."
    )
    assert block_words(steering) == "Stop using docker."
    openhands = "Fix the login bug.\n<EXTRA_INFO>\nmicroagent knowledge\n</EXTRA_INFO>"
    assert block_words(openhands) == "Fix the login bug."
