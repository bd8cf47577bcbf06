from app.core.partition import partition_messages
from tests.builders import assistant, parse, system, user


def test_head_is_the_leading_run_of_system_messages() -> None:
    messages = parse([system("a"), system("b"), user("hi"), system("late"), assistant("ok")])
    part = partition_messages(messages)
    assert [m.content for m in part.head] == ["a", "b"]
    assert part.rest[0].content == "hi"
    assert len(part.rest) == 3  # a later system message belongs to the rest


def test_no_system_message_gives_an_empty_head() -> None:
    part = partition_messages(parse([user("hi"), assistant("ok")]))
    assert part.head == ()
    assert len(part.rest) == 2


def test_only_system_messages_leave_nothing_to_compact() -> None:
    part = partition_messages(parse([system("a"), system("b")]))
    assert len(part.head) == 2
    assert part.rest == ()


def test_empty_list_gives_two_empty_parts() -> None:
    part = partition_messages([])
    assert (part.head, part.rest) == ((), ())


def test_a_single_non_system_message_goes_to_the_rest() -> None:
    part = partition_messages(parse([user("only")]))
    assert part.head == ()
    assert [m.content for m in part.rest] == ["only"]
