"""`split_turn`: which end of a list `full` and `selective` keep as sent after the summary,
and `summary_turns`: where a summary written after the head goes, by format."""

from __future__ import annotations

import pytest

from app.core.assemble import SUMMARY_ACK, split_turn, summary_turn, summary_turns
from app.core.messages import Message
from app.core.vocabulary import Format
from tests.builders import assistant, parse, tool_result, tool_use, user

CALL = tool_use("bash", "t1", command="make")
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVB"}}
MIXED = {
    "role": "user",
    "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
        {"type": "text", "text": "Also check b.py."},
        IMAGE,
    ],
}


def test_the_users_new_request_is_kept_whole() -> None:
    rest = parse([user("Fix a.py."), assistant("Done."), user("Now b.py.")])
    assert split_turn(rest) == (rest[:-1], (rest[-1],))


def test_words_sent_beside_tool_results_are_kept_and_the_results_summarized() -> None:
    rest = parse([user("Go."), assistant(CALL), MIXED])
    summarized, kept = split_turn(rest)
    assert summarized[:-1] == rest[:-1]
    assert summarized[-1] == Message.model_validate(
        {"role": "user", "content": [MIXED["content"][0]]}
    )
    assert [kept[0].model_dump(exclude_unset=True)] == [
        {"role": "user", "content": [MIXED["content"][1], IMAGE]}
    ]


def test_nothing_is_kept_after_the_model_or_alone_or_after_tool_results_alone() -> None:
    for messages in (
        [user("Fix a.py."), assistant("Done.")],
        [user("Fix a.py.")],
        [user("Go."), assistant(CALL), tool_result("t1", "ok")],
    ):
        rest = parse(messages)
        assert split_turn(rest) == (rest, ())


@pytest.mark.parametrize(
    ("fmt", "roles"),
    [("anthropic", ["user", "assistant"]), ("openai", ["system"]), ("responses", ["system"])],
)
def test_a_summary_after_the_head_takes_the_roles_the_format_allows(
    fmt: Format, roles: list[str]
) -> None:
    turns = summary_turns("## Archived\n- a", user_turn=fmt == "anthropic")
    assert [m.role for m in turns] == roles
    if fmt == "anthropic":
        assert turns[0].content == summary_turn("## Archived\n- a")
        assert turns[1].content == SUMMARY_ACK
