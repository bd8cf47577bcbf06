from __future__ import annotations

from app.core.assemble import RESTORED_ACK, SUMMARY_ACK, restored_file_message, summary_message
from app.core.history.rounds import Round, opens_round, segment_rounds
from app.core.messages import Message
from app.core.provider.dialects import from_openai
from tests.builders import assistant, parse, system, tool_result, tool_use, user


def test_a_round_runs_from_a_request_to_the_answer_with_its_tool_pairs_inside() -> None:
    messages = parse(
        [
            system("s"),
            user("Fix a.py."),
            assistant("Reading.", tool_use("read_file", "t1", path="a.py")),
            tool_result("t1", "x = 1"),
            assistant("Fixed."),
            user("Now b.py."),
            assistant("Done."),
        ]
    )
    assert segment_rounds(messages, 1) == [
        Round(1, 5, opens_mid_message=False, complete=True),
        Round(5, 7, opens_mid_message=False, complete=True),
    ]


def test_several_tool_calls_in_one_message_stay_in_the_round_of_their_request() -> None:
    messages = parse(
        [
            user("Compare a and b."),
            assistant(tool_use("read_file", "t1", path="a"), tool_use("read_file", "t2", path="b")),
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "A"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": "B"},
                ],
            },
            assistant("They differ."),
        ]
    )
    assert segment_rounds(messages) == [Round(0, 4, complete=True)]


def test_a_round_still_in_progress_is_the_last_round_and_not_complete() -> None:
    messages = parse(
        [
            user("First."),
            assistant("Done."),
            user("Second."),
            assistant("Reading.", tool_use("read_file", "t1", path="a")),
            tool_result("t1", "A"),
        ]
    )
    assert segment_rounds(messages) == [Round(0, 2, complete=True), Round(2, 5, complete=False)]


def test_an_openai_tool_run_with_a_user_message_after_it_opens_the_next_round_mid_message() -> None:
    raw = [
        {"role": "user", "content": "Run the tests."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "tool", "tool_call_id": "c2", "content": "ok"},
        {"role": "user", "content": "Please continue."},
        {"role": "assistant", "content": "All green."},
    ]
    messages = from_openai(raw)
    assert len(messages) == 4
    assert segment_rounds(messages) == [
        Round(0, 2, complete=False),
        Round(2, 4, opens_mid_message=True, complete=True),
    ]


def test_earlier_summary_and_restored_file_pairs_do_not_open_rounds() -> None:
    messages = [
        summary_message("old summary"),
        Message(role="assistant", content=SUMMARY_ACK),
        restored_file_message("a.py", "x = 1"),
        Message(role="assistant", content=RESTORED_ACK),
        *parse([user("Go on."), assistant("Ok.")]),
    ]
    assert not opens_round(messages[0])
    assert not opens_round(messages[2])
    assert segment_rounds(messages) == [Round(0, 4, complete=True), Round(4, 6, complete=True)]


def test_messages_before_the_first_request_form_a_round_of_their_own() -> None:
    messages = parse([assistant("Hello."), user("Hi."), assistant("Yes?")])
    assert segment_rounds(messages) == [Round(0, 1, complete=True), Round(1, 3, complete=True)]


def test_a_tool_result_only_message_does_not_open_a_round() -> None:
    assert not opens_round(parse([tool_result("t1", "A")])[0])
    assert opens_round(parse([user("A request.")])[0])
    assert not opens_round(parse([assistant("An answer.")])[0])
