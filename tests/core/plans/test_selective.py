from __future__ import annotations

from functools import partial
from typing import Any

from app.core.assemble import SUMMARY_ACK
from app.core.cut import cut_note
from app.core.messages import dump_messages
from app.core.plans.selective import (
    GAP_TEXT,
    SelectiveLimits,
    SelectivePlan,
    classify,
    plan_selective,
)
from app.core.tokens import count_messages, count_total
from tests.builders import assistant, parse, system, tool_result, tool_use, user
from tests.fakes.tokenizer import WordTokenizer

WORDS = WordTokenizer()
GAP_USER = {"role": "user", "content": GAP_TEXT}
GAP_ASSISTANT = {"role": "assistant", "content": GAP_TEXT}


def plan(
    raw: list[dict[str, Any]], target: int = 0, *, force: bool = False, **limits: Any
) -> SelectivePlan:
    messages = parse(raw)
    head = sum(1 for m in messages if m.role == "system")
    return plan_selective(
        messages,
        head,
        SelectiveLimits(**limits),
        target,
        WORDS.count,
        partial(count_messages, WORDS),
        force=force,
    )


def tokens(raw: list[dict[str, Any]]) -> int:
    return count_total(WORDS, parse(raw))


def block(n: int, output: str = "ok") -> list[dict[str, Any]]:
    call = tool_use("bash", f"t{n}", command=f"step {n}")
    return [assistant(f"Step {n}.", call), tool_result(f"t{n}", output)]


S = system("You are an agent.")
TASK = user("Fix the bug.")
B1, B2, B3, B4 = block(1), block(2), block(3), block(4)
DONE = assistant("Done.")
TOOLS = [S, TASK, *B1, *B2, *B3, *B4, DONE]


def test_old_tool_blocks_are_dropped_as_units_and_the_recent_ones_kept() -> None:
    result = plan(TOOLS, force=True, keep_recent=2)
    assert dump_messages(result.messages[:8]) == [S, TASK, *B3, *B4, DONE]
    assert result.phases[1].phase == "tool_blocks"
    assert result.phases[1].detail == "dropped 2 tool blocks, cut 0 inputs and 0 results"


def test_rules_stop_once_the_list_is_under_the_target() -> None:
    expected = [S, TASK, *B3, *B4, DONE]
    result = plan(TOOLS, target=tokens(expected) + 1, keep_recent=2)
    assert dump_messages(result.messages) == expected
    assert [p.phase for p in result.phases] == ["selective_start", "tool_blocks", "selective_done"]
    assert result.compacted_indexes == (2, 3, 4, 5)
    assert result.token_count == tokens(expected)


def test_nothing_runs_when_the_input_is_already_under_the_target() -> None:
    result = plan(TOOLS, target=tokens(TOOLS) + 1, keep_recent=0)
    assert dump_messages(result.messages) == TOOLS
    assert [p.phase for p in result.phases] == ["selective_start", "selective_done"]
    assert result.compacted_indexes == ()


def test_rules_run_in_priority_order_and_report_each_phase() -> None:
    skill = user("Use the deploy skill.") | {"metadata": {"kind": "skill_prompt"}}
    meta = user("skill: deploy") | {"metadata": {"kind": "skill_metadata"}}
    raw = [
        S,
        user("u1"),
        assistant("a1"),
        skill,
        assistant("a2"),
        meta,
        assistant("a3"),
        *B1,
        assistant("a4"),
        user("u2"),
        assistant("a5"),
    ]
    result = plan(raw, force=True, keep_recent=1)
    phases = [(p.phase, p.detail) for p in result.phases]
    assert phases == [
        ("selective_start", None),
        ("tool_blocks", "dropped 0 tool blocks, cut 0 inputs and 0 results"),
        ("skill_prompt", "dropped 1 messages"),
        ("assistant_message", "dropped 4 messages"),
        ("skill_metadata", "dropped 1 messages"),
        ("user_message", "dropped 0 messages"),
        ("selective_done", None),
    ]
    for before, after in zip(result.phases[1:-2], result.phases[2:-1], strict=True):
        assert before.tokens_after == after.tokens_before
    assert result.phases[0].tokens_before == tokens(raw)
    assert (
        result.phases[-1].tokens_after == result.token_count == count_total(WORDS, result.messages)
    )
    assert dump_messages(result.messages) == [
        S,
        user("u1"),
        *B1,
        GAP_ASSISTANT,
        user("u2"),
        assistant("a5"),
    ]


def test_old_assistant_messages_leave_gap_messages_and_every_user_request_stays() -> None:
    raw = [S, user("u1"), assistant("a1"), user("u2"), assistant("a2"), user("u3"), assistant("a3")]
    result = plan(raw, force=True, keep_recent=1)
    assert dump_messages(result.messages) == [
        S,
        user("u1"),
        GAP_ASSISTANT,
        user("u2"),
        GAP_ASSISTANT,
        user("u3"),
        assistant("a3"),
    ]
    assert result.compacted_indexes == (2, 4)


def test_an_assistant_message_left_first_gets_a_gap_user_message_before_it() -> None:
    memory = assistant("Notes: the repo uses tabs.") | {"metadata": {"kind": "memory"}}
    harness = user("<environment_details>\nCurrent time: 10:00\n</environment_details>")
    raw = [S, harness, memory, user("u2"), assistant("a2")]
    result = plan(raw, force=True, keep_recent=0)
    assert dump_messages(result.messages) == [S, GAP_USER, memory, user("u2")]
    assert result.compacted_indexes == (1, 4)


def test_a_dropped_block_keeps_the_users_text_sent_with_its_results() -> None:
    call = tool_use("bash", "t9", command="ls")
    mixed = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t9", "content": "a.py"},
            {"type": "text", "text": "Also check b.py."},
        ],
    }
    raw = [S, TASK, assistant("Listing.", call), mixed, assistant("Checking."), *B1, DONE]
    result = plan(raw, force=True, keep_recent=1, fallback_to_summary=False)
    assert dump_messages(result.messages[:4]) == [
        S,
        TASK,
        GAP_ASSISTANT,
        {"role": "user", "content": [{"type": "text", "text": "Also check b.py."}]},
    ]


def test_large_inputs_and_results_of_kept_blocks_are_cut_to_a_preview() -> None:
    call = tool_use("bash", "t1", command="one two three four five six seven")
    small = tool_use("bash", "t2", command="a b c d")
    raw = [
        S,
        TASK,
        assistant("Run.", call),
        tool_result("t1", "r1 r2 r3 r4 r5 r6"),
        assistant("Run.", small),
        tool_result("t2", "r1 r2 r3 r4 r5"),
    ]
    result = plan(raw, force=True, tool_call_threshold=5, tool_result_threshold=5, preview_tokens=3)
    preview = '{"command":"one two three\n' + cut_note(7, 3)
    assert dump_messages(result.messages) == [
        S,
        TASK,
        assistant("Run.", call | {"input": {"_preview": preview}}),
        tool_result("t1", "r1 r2 r3\n" + cut_note(6, 3)),
        assistant("Run.", small),
        tool_result("t2", "r1 r2 r3 r4 r5"),
    ]
    assert result.phases[1].detail == "dropped 0 tool blocks, cut 1 inputs and 1 results"
    assert result.compacted_indexes == (2, 3)


def test_items_already_marked_as_cut_are_left_alone() -> None:
    cut_before = "x " * 50 + "\n" + cut_note(900, 50)
    pruned = {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": "y " * 50,
                "compacted_at": 1763900000,
            }
        ],
    }
    previewed = tool_use("bash", "t3") | {"input": {"_preview": "z " * 50}}
    raw = [
        S,
        TASK,
        assistant("Run.", tool_use("bash", "t1", command="ls")),
        tool_result("t1", cut_before),
        assistant("Run.", tool_use("bash", "t2", command="ls")),
        pruned,
        assistant("Run.", previewed),
        tool_result("t3", "ok"),
    ]
    result = plan(raw, force=True, tool_call_threshold=5, tool_result_threshold=5)
    assert dump_messages(result.messages) == raw
    assert result.compacted_indexes == ()


def test_thinking_blocks_of_the_current_round_are_protected() -> None:
    thinking = {"type": "thinking", "thinking": "I should list " * 40, "signature": "sig"}
    old_thinking = {"type": "thinking", "thinking": "old", "signature": "s0"}
    call = tool_use("bash", "t8", command="ls")
    raw = [
        S,
        user("Old task."),
        assistant(old_thinking, tool_use("bash", "t7", command="pwd")),
        tool_result("t7", "/repo"),
        assistant("Old answer."),
        user("New task."),
        assistant(thinking, call),
        tool_result("t8", "w " * 700),
        *B1,
    ]
    result = plan(raw, force=True, keep_recent=0)
    assert dump_messages(result.messages) == [
        S,
        user("Old task."),
        GAP_ASSISTANT,
        user("New task."),
        assistant(thinking, call),
        tool_result("t8", "w " * 700),
    ]


def test_system_memory_and_summaries_are_never_compressed() -> None:
    memory = user("Remember: tabs, not spaces.") | {"metadata": {"kind": "memory"}}
    summary = user("[Conversation compressed]\n\nEarlier work.")
    ack = {"role": "assistant", "content": SUMMARY_ACK}
    raw = [S, summary, ack, memory, assistant("ok"), *B1, user("Go on."), assistant("Going.")]
    assert classify(parse(raw)) == [
        "system_prompt",
        "compaction_summary",
        "compaction_summary",
        "memory",
        "assistant_message",
        "tool_block",
        "tool_block",
        "user_message",
        "assistant_message",
    ]
    result = plan(raw, force=True, keep_recent=0)
    assert dump_messages(result.messages) == [
        S,
        summary,
        ack,
        memory,
        GAP_ASSISTANT,
        user("Go on."),
    ]
    assert result.memory_indexes == (3,)


def test_openai_metadata_is_read_from_the_dialects_bookkeeping() -> None:
    from app.core.provider.dialects import from_openai

    messages = from_openai(
        [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "m", "metadata": {"kind": "memory"}},
            {"role": "assistant", "content": "a"},
        ]
    )
    assert classify(messages) == ["system_prompt", "memory", "assistant_message"]


def test_the_user_rule_removes_harness_text_but_keeps_the_tool_results_sent_with_it() -> None:
    call = tool_use("bash", "t9", command="ls")
    mixed = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t9", "content": "a.py"},
            {
                "type": "text",
                "text": "<environment_details>\n# Open Tabs\nb.py\n</environment_details>",
            },
        ],
    }
    cline_result = user("[execute_command for 'make'] Result:\nok")
    raw = [
        S,
        user("u1"),
        assistant("Listing.", call),
        mixed,
        assistant("a2"),
        cline_result,
        assistant("a3"),
        user("u3"),
    ]
    result = plan(raw, force=True, keep_recent=1)
    assert dump_messages(result.messages) == [
        S,
        user("u1"),
        assistant("Listing.", call),
        {"role": "user", "content": [mixed["content"][0]]},
        GAP_ASSISTANT,
        cline_result,
        assistant("a3"),
        user("u3"),
    ]
    assert result.compacted_indexes == (3, 4)
