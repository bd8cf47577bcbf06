"""`tail`'s earlier archives found after the head, in either role."""

from __future__ import annotations

from app.core.assemble import SUMMARY_ACK, SUMMARY_PREFIX, summary_turn
from app.core.plans.archived import archived_end, archived_groups, is_archived_turn
from app.core.summary.prompt import ARCHIVED_TITLE
from tests.builders import assistant, parse, system, user

ARCHIVE = f"{ARCHIVED_TITLE}\n*(Contains context from message 2 to message 9)*\n\nGoal: X."


def test_archived_user_turns_after_the_head_count_as_head() -> None:
    messages = parse(
        [
            system("s"),
            user(summary_turn(ARCHIVE)),
            assistant(SUMMARY_ACK),
            user(summary_turn(ARCHIVE)),
            assistant(SUMMARY_ACK),
            user("Task."),
        ]
    )
    assert archived_end(messages, 1) == 5
    assert archived_groups(messages[:5]) == [(1, 2), (3, 4)]


def test_a_turn_without_its_acknowledgement_or_another_summary_is_not_an_archive() -> None:
    full_summary = parse([system("s"), user(summary_turn("Goal: X.")), assistant(SUMMARY_ACK)])
    assert archived_end(full_summary, 1) == 1
    no_ack = parse([system("s"), user(summary_turn(ARCHIVE)), assistant("Sure.")])
    assert archived_end(no_ack, 1) == 1


def test_a_turn_written_before_the_framing_is_an_archive_too() -> None:
    (older,) = parse([user(f"{SUMMARY_PREFIX}{ARCHIVE}")])
    (quoted,) = parse([user(f"Look at this:\n{ARCHIVE}")])
    assert (is_archived_turn(older), is_archived_turn(quoted)) == (True, False)


def test_archived_system_messages_are_groups_of_one() -> None:
    head = parse([system("s"), system(ARCHIVE)])
    assert archived_groups(head) == [(1,)]
