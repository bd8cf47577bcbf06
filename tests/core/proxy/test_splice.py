from __future__ import annotations

from typing import Any

from app.core.assemble import CONTINUE
from app.core.proxy.splice import (
    boundaries,
    breakpoints,
    choose_cut,
    lasting,
    make_head,
    message_breakpoints,
    with_breakpoint,
    without_breakpoints,
)

Json = dict[str, Any]


def user(text: str) -> Json:
    return {"role": "user", "content": text}


def assistant(text: str) -> Json:
    return {"role": "assistant", "content": text}


def call(i: int) -> Json:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": f"t{i}", "name": "bash", "input": {}}],
    }


def result(i: int) -> Json:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}],
    }


LOOP = [
    user("Fix the build."),
    call(1),
    result(1),
    call(2),
    result(2),
    assistant("Fixed."),
    user("Now docs."),
]


def test_a_cut_falls_before_an_assistant_turn_or_a_new_request_never_before_tool_results() -> None:
    assert list(boundaries(LOOP, 0)) == [1, 3, 5, 6]


def test_the_openai_shape_cuts_before_assistant_and_user_messages_not_tool_messages() -> None:
    chat = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "Fix it."},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Thanks."},
    ]
    assert list(boundaries(chat, 1)) == [2, 4, 5]


def test_the_cut_keeps_the_most_that_fits_else_the_least() -> None:
    counts = [10, 5, 100, 5, 100, 5, 5]
    assert choose_cut(LOOP, counts, 0, keep=115) == 3  # keeps 5+100+5+5
    assert choose_cut(LOOP, counts, 0, keep=10) == 5  # keeps 5+5
    assert choose_cut(LOOP, counts, 0, keep=1) == 6  # nothing fits: the latest cut
    assert choose_cut(LOOP, counts, 6, keep=1000) is None


def test_a_cut_after_the_latest_message_only_for_a_head_that_goes_in_after_it_was_read() -> None:
    counts = [10, 5, 100, 5, 100, 5, 500]  # the new request is larger than any budget
    assert choose_cut(LOOP, counts, 0, keep=100) == 6  # sent now: the latest cut
    assert choose_cut(LOOP, counts, 0, keep=100, read=True) == 7  # after it, all of it
    assert choose_cut(LOOP, counts, 0, keep=600, read=True) == 5  # the most that fits
    assert choose_cut(LOOP[:5], counts[:5], 0, keep=1, read=True) == 5  # after tool results
    prefill = [*LOOP, assistant("The docs")]  # answered where it ends: never a cut
    assert choose_cut(prefill, [*counts, 1], 0, keep=1, read=True) == 7


def test_a_moved_breakpoint_leaves_the_history_a_head_stands_for_the_same() -> None:
    marked = [user("Fix the build."), call(1), with_breakpoint(result(1))]
    wrapped = [*LOOP[:2], {**with_breakpoint(user("Now docs."))}]
    head = make_head([user("[Conversation compressed]\n\nsummary")], marked, 3, tokens=9)
    later = [*LOOP[:3], call(2)]  # the agent moved its breakpoint to its latest message
    assert head.splice(later) == [*head.messages, call(2)]
    # A lone text block marked is the text the agent sent as a string the turn after.
    head = make_head([user("summary")], wrapped, 3, tokens=9)
    assert head.splice([*LOOP[:2], user("Now docs."), call(3)]) is not None
    # What the model reads differs: not the same history.
    assert head.splice([*LOOP[:2], user("Now tests."), call(3)]) is None
    two = {"role": "user", "content": [{"type": "text", "text": "Now docs."}] * 2}
    assert head.splice([*LOOP[:2], two, call(3)]) is None


def test_a_head_is_spliced_into_every_request_that_still_starts_with_what_it_replaced() -> None:
    core = [user("[Conversation compressed]\n\nsummary"), assistant("Understood.")]
    head = make_head(core, LOOP, 3, tokens=20)
    assert head.seam  # the kept part starts with the assistant's tool call
    later = [*LOOP, assistant("Docs written.")]
    assert head.splice(later) == [*core, user(CONTINUE), *LOOP[3:], assistant("Docs written.")]
    assert head.splice(LOOP) == head.splice(LOOP)
    rewritten = [user("Fix the build!"), *LOOP[1:]]
    assert head.splice(rewritten) is None
    assert head.splice(LOOP[:2]) is None
    assert head.splice(LOOP[:3]) == [*core, user(CONTINUE)]  # all it stands for


def test_no_seam_when_the_head_ends_with_the_user_or_the_kept_part_starts_with_one() -> None:
    ends_user = make_head([user("summary")], LOOP, 3, tokens=5)
    before_request = make_head([user("summary"), assistant("ok")], LOOP, 6, tokens=5)
    assert (ends_user.seam, before_request.seam) == (False, False)
    assert before_request.splice(LOOP) == [user("summary"), assistant("ok"), user("Now docs.")]


def test_breakpoints_are_counted_everywhere_a_request_sets_them() -> None:
    mark = {"type": "ephemeral"}
    body = {
        "cache_control": mark,
        "tools": [{"name": "a", "cache_control": mark}, {"name": "b"}],
        "system": [{"type": "text", "text": "s", "cache_control": mark}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "x", "cache_control": mark}]}
        ],
    }
    assert breakpoints(body) == 4
    assert message_breakpoints(body["messages"]) == 1


def test_a_breakpoint_goes_on_the_last_block_and_comes_off_again() -> None:
    marked = with_breakpoint(user("summary"))
    assert marked == {
        "role": "user",
        "content": [{"type": "text", "text": "summary", "cache_control": {"type": "ephemeral"}}],
    }
    assert without_breakpoints([marked]) == [
        {"role": "user", "content": [{"type": "text", "text": "summary"}]}
    ]
    assert with_breakpoint({"role": "user", "content": []}) == {"role": "user", "content": []}


def _marked(text: str, ttl: str | None = None) -> dict[str, Any]:
    mark = {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}
    return {"role": "user", "content": [{"type": "text", "text": text, "cache_control": mark}]}


def test_a_heads_breakpoint_lives_as_long_as_the_longest_lived_after_it() -> None:
    """The provider refuses a breakpoint before a longer-lived one: the head's (five minutes,
    no `ttl`) takes an hour when the client marks a later message for an hour."""
    head = [with_breakpoint(user("summary")), assistant("ok")]
    later = [user("q"), assistant("a"), _marked("latest", "1h")]
    sent = lasting([*head, *later], len(head))
    assert sent[0]["content"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert sent[1:] == [head[1], *later]
    # Later breakpoints of five minutes, none, or a lifetime the provider does not name:
    # the head as it was.
    for after in ([_marked("latest")], [user("latest")], [_marked("latest", "2h")]):
        assert lasting([*head, *after], len(head)) == [*head, *after]
    # The request's automatic breakpoint (its top-level `cache_control`) counts too.
    automatic = {"type": "ephemeral", "ttl": "1h"}
    assert lasting([*head, user("q")], len(head), automatic)[0] == _marked("summary", "1h")
