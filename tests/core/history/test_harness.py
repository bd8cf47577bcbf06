from __future__ import annotations

import pytest

from app.core.assemble import CONTINUE, RESTORED_ACK, SUMMARY_ACK
from app.core.history.facts import extract_facts
from app.core.history.harness import PART_OPENING, block_words, user_words
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


@pytest.mark.parametrize("ack", [SUMMARY_ACK, RESTORED_ACK])
def test_the_continue_this_service_puts_after_its_acknowledgement_is_not_a_request(
    ack: str,
) -> None:
    """A compacted history handed back (a job's seam, a prefill) goes on with `Continue.`
    after the service's acknowledgement; compacted again, that is not what the user asked.
    Said after the assistant's own words, it is."""
    ours = parse([user("Fix the parser."), assistant(ack), user(CONTINUE), assistant("ok")])
    facts = extract_facts(ours)
    assert (facts.first_request, facts.latest_request) == ("Fix the parser.", None)
    assert [f.kind for f in extract_ledger(ours)] == ["goal"]
    theirs = parse([user("Fix the parser."), assistant("Paused."), user(CONTINUE)])
    assert extract_facts(theirs).latest_request == CONTINUE


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


@pytest.mark.parametrize(
    "text",
    [
        "\t\t# TODO LIST UPDATE REQUIRED - You MUST include the task_progress parameter\n\n"
        "**Current Progress: 2/5 items completed (40%)**\n\n- [x] Set up\n- [ ] Migrate",
        "<environment_context>\n  <cwd>/home/dev/repo</cwd>\n  <sandbox_mode>workspace-write"
        "</sandbox_mode>\n</environment_context>",
        "<user_instructions>\nAlways run the linter.\n</user_instructions>",
        "This is the Gemini CLI. We are setting up the context for our chat.\nToday's date is "
        "Monday.\nI'm currently working in the directory: /srv/app",
        "I committed the changes with git hash 1a2b3c4 & commit msg: Fix the parser",
        "I added these files to the chat: src/app.py\nLet me know if there are others we should "
        "add.",
        "This session is being continued from a previous conversation that ran out of context. "
        "The conversation is summarized below:\nAnalysis: the user asked for a CLI.",
        "  # Reminder: Instructions for Tool Use\n\nTool uses are formatted using XML-style tags.",
        PART_OPENING,
    ],
)
def test_what_other_harnesses_write_is_not_the_users(text: str) -> None:
    assert block_words(text) == ""


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "[Request interrupted by user]\n\nNo, use the v2 endpoint instead.",
            "No, use the v2 endpoint instead.",
        ),
        (
            "[Request interrupted by user for tool use]\nNein, bitte zuerst die Tests ausführen.",
            "Nein, bitte zuerst die Tests ausführen.",
        ),
        (
            "Caveat: The messages below were generated by the user while running local commands. "
            "DO NOT respond to these messages.\nDeploy it to staging now.",
            "Deploy it to staging now.",
        ),
        (
            "Explain @src/a.py please\n--- Content from referenced files ---\nContent from "
            "@src/a.py:\nprint(1)\n--- End of content ---",
            "Explain @src/a.py please",
        ),
    ],
)
def test_the_users_words_after_a_notice_stay(text: str, words: str) -> None:
    assert block_words(text) == words


def test_a_notice_named_inside_the_users_sentence_is_their_words() -> None:
    text = "Why does the log print TODO LIST UPDATE REQUIRED after every step?"
    assert block_words(text) == text
