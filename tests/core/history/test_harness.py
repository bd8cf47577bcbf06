from __future__ import annotations

import pytest

from app.core.history.facts import extract_facts
from app.core.history.harness import block_words, user_words
from app.core.ledger.extract import Fact, extract_ledger
from app.core.messages import Message
from app.core.summary.extractive import extract_summary
from tests.builders import assistant, parse, tool_result, tool_use, user

CLINE_TASK = (
    "<task>\nWe are completely dropping Firebase. Do not proceed to the next phase until I "
    "review.\n</task>"
)
ENVIRONMENT = (
    "<environment_details>\n# VSCode Visible Files\nsrc/app.ts\n\n# Current Mode\nACT MODE\n"
    "</environment_details>"
)
TODO_NAG = "# TODO LIST UPDATE REQUIRED\nYou MUST update the todo list. Do not skip this step.\n"


def blocks(*texts: str) -> Message:
    return Message.model_validate(
        {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}
    )


def test_cline_task_is_unwrapped_and_environment_details_dropped() -> None:
    assert user_words(blocks(CLINE_TASK, ENVIRONMENT)) == (
        "We are completely dropping Firebase. Do not proceed to the next phase until I review."
    )


@pytest.mark.parametrize(
    "text",
    [
        ENVIRONMENT,
        TODO_NAG,
        "[execute_command for 'npm install'] Result:\nTo address issues that do not require "
        "attention, run:\n  npm audit fix",
        "<system-reminder>\nThe user mentioned @a.py. You MUST read it.\n</system-reminder>",
        "[TASK RESUMPTION] This task was interrupted 2 minutes ago.",
        "[Request interrupted by user for tool use]",
    ],
)
def test_text_the_harness_wrote_is_not_the_users(text: str) -> None:
    assert block_words(text) == ""


def test_feedback_inside_a_tool_result_block_is_the_users() -> None:
    text = (
        "[attempt_completion] Result:\nThe user has provided feedback on the results.\n"
        "<feedback>\nAlso keep the old bucket name.\n</feedback>"
    )
    assert block_words(text) == "Also keep the old bucket name."


def test_a_reminder_appended_to_the_users_words_goes() -> None:
    text = "Fix the parser.\n\n<system-reminder>\nRead @a.py first.\n</system-reminder>"
    assert block_words(text) == "Fix the parser."
    assert block_words(f"Ship it.\n\n{TODO_NAG}") == "Ship it."


def cline_session() -> list[Message]:
    call = tool_use("execute_command", "t1", command="npm install")
    return [
        blocks(CLINE_TASK, ENVIRONMENT),
        *parse([assistant("Installing.", call)]),
        # Cline sends tool results as user text, with the environment and nags after them.
        blocks(
            "[execute_command for 'npm install'] Result:",
            "To address issues that do not require attention, run:\n  npm audit fix",
            f"{ENVIRONMENT}\n\n{TODO_NAG}",
        ),
        *parse([assistant("Done with phase 1.")]),
        blocks("<feedback>\nNow also migrate the thumbnails.\n</feedback>", ENVIRONMENT),
        *parse([assistant("On it.")]),
    ]


def test_latest_request_is_what_the_user_said() -> None:
    facts = extract_facts(cline_session())
    assert facts.first_request
    assert facts.first_request.startswith("We are completely dropping")
    assert facts.latest_request == "Now also migrate the thumbnails."
    summary = extract_summary(cline_session(), 1200)
    assert "environment_details" not in summary
    assert "TODO LIST" not in summary


def test_the_ledger_takes_instructions_from_the_users_words_only() -> None:
    ledger = extract_ledger(cline_session())
    said = [f for f in ledger if f.kind in ("goal", "request", "instruction")]
    assert said == [
        Fact(
            "goal",
            "We are completely dropping Firebase. Do not proceed to the next phase until I review.",
        ),
        Fact("instruction", "Do not proceed to the next phase until I review."),
        Fact("request", "Now also migrate the thumbnails."),
    ]


def test_tool_results_are_never_requests() -> None:
    messages = parse(
        [
            user("Run the tests."),
            assistant(tool_use("bash", "t1", command="pytest")),
            tool_result("t1", "You must not skip tests. Never commit."),
        ]
    )
    assert [f.kind for f in extract_ledger(messages) if f.kind == "instruction"] == []
