"""`current_turn`: which end of a list `full` keeps as sent after the summary."""

from __future__ import annotations

from app.core.assemble import current_turn
from tests.builders import assistant, parse, tool_result, tool_use, user


def test_the_users_new_request_is_kept() -> None:
    rest = parse([user("Fix a.py."), assistant("Done."), user("Now b.py.")])
    assert current_turn(rest) == (rest[-1],)


def test_nothing_is_kept_after_the_model_or_alone_or_with_a_tool_result() -> None:
    call = tool_use("bash", "t1", command="make")
    mixed = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
            {"type": "text", "text": "Also check b.py."},
        ],
    }
    assert current_turn(parse([user("Fix a.py."), assistant("Done.")])) == ()
    assert current_turn(parse([user("Fix a.py.")])) == ()
    assert current_turn(parse([user("Go."), assistant(call), tool_result("t1", "ok")])) == ()
    assert current_turn(parse([user("Go."), assistant(call), mixed])) == ()
