from __future__ import annotations

from typing import Any

import pytest

from app.core.messages import Message, text_message
from app.core.plans.tail import (
    EARLIER_EXCHANGES_NOTE,
    TailDeclined,
    TailPlan,
    archive_span,
    archived_header,
    archived_text,
    assemble_tail,
    plan_tail,
)
from app.core.provider.rules import violations
from app.core.summary.prompt import ARCHIVED_TITLE
from tests.builders import assistant, parse, system, tool_result, tool_use, user


def rounds(n: int) -> list[dict[str, Any]]:
    """`n` rounds of a request, a tool call with its result, and an answer."""
    out: list[dict[str, Any]] = []
    for i in range(1, n + 1):
        out += [
            user(f"Task {i}."),
            assistant(tool_use("bash", f"t{i}", command=f"echo {i}")),
            tool_result(f"t{i}", str(i)),
            assistant(f"Done {i}."),
        ]
    return out


CONVERSATION = parse([system("s"), *rounds(4)])
COUNTS = [10] * len(CONVERSATION)  # every message 10 tokens: a round is 40


def test_tail_keeps_the_most_recent_rounds_verbatim_and_plans_the_rest_for_the_summary() -> None:
    plan = plan_tail(CONVERSATION, 1, COUNTS, keep_rounds=2, target=1000)
    assert plan == TailPlan(
        older=tuple(CONVERSATION[1:9]),
        kept=tuple(CONVERSATION[9:]),
        compacted_indexes=tuple(range(1, 9)),
        kept_rounds=2,
        warnings=(),
        verbatim_from=9,
    )


def test_tail_keeps_fewer_rounds_when_they_exceed_the_target_and_says_so() -> None:
    plan = plan_tail(CONVERSATION, 1, COUNTS, keep_rounds=3, target=85)
    assert plan is not None
    assert plan.kept == tuple(CONVERSATION[9:])
    assert plan.warnings == (
        "kept 2 of the 3 most recent rounds asked for: 3 rounds take 120 tokens, "
        "over the target of 85",
    )


@pytest.mark.slow
def test_a_current_round_over_the_target_is_cut_between_its_exchanges() -> None:
    plan = plan_tail(CONVERSATION, 1, COUNTS, keep_rounds=2, target=5)
    assert plan is not None
    # The request (10 tokens) is over a quarter of the target: a note opens the kept part.
    assert plan.kept == (text_message("user", EARLIER_EXCHANGES_NOTE), CONVERSATION[16])
    assert plan.older == tuple(CONVERSATION[1:16])
    assert plan.compacted_indexes == tuple(range(1, 16))
    assert (plan.verbatim_from, plan.request_kept) == (16, None)
    assert plan.warnings == (
        "the current round alone takes 40 tokens, over the target of 5: its 1 most recent "
        "tool exchanges are kept verbatim (10 tokens), its 2 older ones summarized",
    )


def test_a_single_long_round_keeps_its_request_and_the_latest_exchanges_that_fit() -> None:
    calls = []
    for i in range(1, 7):
        calls += [
            assistant(tool_use("bash", f"t{i}", command=f"step {i}")),
            tool_result(f"t{i}", "ok"),
        ]
    messages = parse([system("s"), user("Fix the bug."), *calls])
    counts = [10] * len(messages)
    plan = plan_tail(messages, 1, counts, keep_rounds=10, target=50)
    assert plan is not None
    # request (10) + two exchanges (40) fit 50: calls 5 and 6 stay, with the request.
    assert plan.kept == (messages[1], *messages[10:])
    assert plan.older == tuple(messages[1:10])
    assert plan.compacted_indexes == tuple(range(2, 10))
    assert (plan.verbatim_from, plan.request_kept) == (10, 1)
    output = assemble_tail(messages[:1], "summary", plan.kept)
    assert violations(output, "anthropic") == []


def test_when_every_round_fits_the_history_is_cut_between_exchanges_at_half() -> None:
    """A forced compaction of rounds that all fit: `tail` still compacts (it used to decline
    and hand the history to `full`), keeping the latest exchanges after their request."""
    for keep in (4, 10):
        plan = plan_tail(CONVERSATION, 1, COUNTS, keep_rounds=keep, target=1000)
        # 160 tokens, half is 80: rounds 3 and 4 (80) do not reach back past it, round 2
        # does; its request and last exchange stay with rounds 3 and 4.
        assert plan == TailPlan(
            older=tuple(CONVERSATION[1:8]),
            kept=(CONVERSATION[5], *CONVERSATION[8:]),
            compacted_indexes=(1, 2, 3, 4, 6, 7),
            kept_rounds=1,
            warnings=(
                "every round fits the target of 1000 (160 tokens): cut between exchanges at "
                "half of them: its 1 most recent tool exchanges are kept verbatim with the "
                "rounds after it (90 tokens), its 2 older ones summarized",
            ),
            verbatim_from=8,
            request_kept=5,
        )
        output = assemble_tail(CONVERSATION[:1], "summary", plan.kept)
        assert violations(output, "anthropic") == []


def test_a_one_request_session_under_the_target_keeps_its_request_and_latest_exchanges() -> None:
    """The agent session's shape (tests/data/corpus): one request, many exchanges, and the
    harness's "Please continue." with the last results, all under the target."""
    calls = []
    for i in range(1, 7):
        calls += [
            assistant(tool_use("bash", f"t{i}", command=f"step {i}")),
            tool_result(f"t{i}", "ok"),
        ]
    last = {
        "role": "user",
        "content": [*calls.pop()["content"], {"type": "text", "text": "Please continue."}],
    }
    messages = parse([system("s"), user("Fix the bug."), *calls, last])
    counts = [10] * len(messages)
    plan = plan_tail(messages, 1, counts, keep_rounds=10, target=1000)
    assert isinstance(plan, TailPlan)
    # 130 tokens, half is 65: the request (10), the last two exchanges and the closing
    # message (50); one more exchange would make 70.
    assert plan.kept == (messages[1], *messages[10:])
    assert plan.compacted_indexes == tuple(range(2, 10))
    assert (plan.verbatim_from, plan.request_kept) == (10, 1)
    assert violations(assemble_tail(messages[:1], "summary", plan.kept), "anthropic") == []


def test_tail_plans_nothing_when_one_exchange_is_all_there_is() -> None:
    messages = parse([system("s"), user("Task 1."), assistant("Done 1.")])
    assert plan_tail(messages, 1, [10, 10, 10], keep_rounds=4, target=1000) == TailDeclined(
        "every round would be kept (tail_keep_recent_rounds 4): nothing older to archive"
    )


def test_a_round_whose_only_exchange_is_over_the_target_is_declined_not_cut() -> None:
    """An agent's first action read a large file: the request would be kept and the one
    exchange cannot be, so there is nothing to summarize (and nothing to archive)."""
    messages = parse(
        [
            system("s"),
            user("Read the file."),
            assistant(tool_use("read_file", "r1", path="big.py")),
            tool_result("r1", "x"),
        ]
    )
    plan = plan_tail(messages, 1, [5, 5, 10, 900], keep_rounds=2, target=100)
    assert plan == TailDeclined(
        "the current round's only tool exchange takes 910 tokens, over the target of 100: "
        "it cannot be kept verbatim and nothing before it is left to summarize"
    )


def test_an_only_exchange_after_earlier_rounds_is_kept_and_the_earlier_rounds_summarized() -> None:
    messages = parse(
        [
            system("s"),
            *rounds(1),
            user("Read the file."),
            assistant(tool_use("read_file", "r1", path="big.py")),
            tool_result("r1", "x"),
        ]
    )
    plan = plan_tail(messages, 1, [5] * 5 + [5, 10, 900], keep_rounds=1, target=100)
    assert isinstance(plan, TailPlan)
    assert plan.compacted_indexes == (1, 2, 3, 4)
    assert plan.kept == tuple(messages[5:])
    assert (plan.verbatim_from, plan.request_kept) == (6, 5)
    assert plan.warnings == (
        "the current round alone takes 915 tokens, over the target of 100: its 1 most recent "
        "tool exchanges are kept verbatim (910 tokens), its 1 older ones summarized",
    )


def test_the_span_of_no_message_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one message"):
        archive_span(CONVERSATION, (), "2026-01-01T00:00:00")


def test_tool_results_sharing_a_message_with_the_next_request_go_with_the_older_rounds() -> None:
    messages = parse(
        [
            system("s"),
            user("Run it."),
            assistant(tool_use("bash", "t1", command="make")),
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "built"},
                    {"type": "text", "text": "Please continue."},
                ],
            },
            assistant("Continuing."),
        ]
    )
    plan = plan_tail(messages, 1, [1] * 5, keep_rounds=1, target=1000)
    assert plan is not None
    assert plan.older == (
        messages[1],
        messages[2],
        Message.model_validate(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "built"}],
            }
        ),
    )
    assert plan.kept == (
        Message.model_validate(
            {"role": "user", "content": [{"type": "text", "text": "Please continue."}]}
        ),
        messages[4],
    )
    assert plan.compacted_indexes == (1, 2, 3)


def test_the_span_uses_metadata_timestamps_when_both_ends_have_one() -> None:
    messages = parse(
        [
            {"role": "user", "content": "a", "metadata": {"timestamp": "2026-11-23T10:00:00Z"}},
            {"role": "assistant", "content": "b", "metadata": {"created_at": 1763892000}},
        ]
    )
    assert archive_span(messages, [0, 1], "now") == ("2026-11-23T10:00:00Z", "1763892000")


def test_the_span_falls_back_to_positions_and_the_time_of_archiving() -> None:
    messages = parse([system("s"), user("a"), assistant("b"), user("c")])
    assert archive_span(messages, [1, 2], "2026-11-23T04:30:00+00:00") == (
        "message 2",
        "message 3, archived 2026-11-23T04:30:00+00:00",
    )


def test_the_archived_text_has_the_template_title_once() -> None:
    header = archived_header("message 2", "message 9")
    assert header == (
        "## \U0001f4cc Archived Session Summary\n*(Contains context from message 2 to message 9)*"
    )
    repeated = f"{ARCHIVED_TITLE}\n*(Contains context from then to now)*\n\n### Body"
    assert archived_text(header, repeated) == f"{header}\n\n### Body"
    assert archived_text(header, "### Body\n") == f"{header}\n\n### Body"


def test_the_archived_summary_goes_after_the_head_and_before_the_kept_rounds() -> None:
    head = parse([system("s"), system("## \U0001f4cc Archived Session Summary\nold")])
    kept = parse([user("Task."), assistant("Done.")])
    assert assemble_tail(head, "new", kept) == [
        *head,
        Message(role="system", content="new"),
        *kept,
    ]
