from __future__ import annotations

from typing import Any

from app.core.history import ERROR_LINE_CHARS, KEY_LINE_SEPARATOR
from app.core.history.failures import error_line
from app.core.ledger.extract import extract_ledger
from app.core.messages import ToolResultBlock, ToolUseBlock, tool_result_text
from app.core.plans.prune import PrunePlan, PruneRules, call_label, placeholder, plan_prune
from app.core.provider.dialects import from_openai, to_openai
from tests.builders import assistant, parse, system, tool_result, tool_use, user

AT = "2026-11-23T04:30:00+00:00"
BIG = "line of output\n" * 40


def words(text: str) -> int:
    """A stand-in tokenizer: one token per word."""
    return len(text.split())


def session() -> list[dict[str, Any]]:
    return [
        system("s"),
        user("Look around."),
        assistant(tool_use("read_file", "t1", path="src/app.py")),
        tool_result("t1", BIG),
        assistant(tool_use("bash", "t2", command="ls -la")),
        tool_result("t2", BIG),
        assistant(tool_use("read_file", "t3", path="README.md")),
        tool_result("t3", BIG),
        assistant("Seen."),
    ]


def cleared(tool_id: str, text: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text}  # no extra key
    return {"role": "user", "content": [block]}


def test_prune_clears_results_outside_the_recent_window_with_a_placeholder() -> None:
    messages = parse(session())
    plan = plan_prune(messages, PruneRules(keep_recent=1), "anthropic", AT, words)
    expected = session()
    expected[3] = cleared("t1", "[Old tool result cleared: read_file(path=src/app.py), 120 tokens]")
    expected[5] = cleared("t2", "[Old tool result cleared: bash(command=ls -la), 120 tokens]")
    assert plan == PrunePlan(
        messages=tuple(parse(expected)),
        compacted_indexes=(3, 5),
        cleared_results=2,
        tokens_saved=(120 - 7) + (120 - 8),  # the placeholders are 7 and 8 words
    )


def test_prune_leaves_the_results_of_excluded_tools() -> None:
    rules = PruneRules(keep_recent=1, exclude_tools=frozenset({"read_file"}))
    plan = plan_prune(parse(session()), rules, "anthropic", AT, words)
    assert plan.compacted_indexes == (5,)
    assert plan.messages[3] == parse(session())[3]


def test_prune_with_a_window_as_large_as_the_history_clears_nothing() -> None:
    messages = parse(session())
    plan = plan_prune(messages, PruneRules(keep_recent=3), "anthropic", AT, words)
    assert plan == PrunePlan(tuple(messages), (), 0, 0)


def test_prune_keeps_results_that_are_smaller_than_their_placeholder() -> None:
    messages = parse(
        [
            user("Go."),
            assistant(tool_use("bash", "t1", command="true")),
            tool_result("t1", "ok"),
            assistant(tool_use("bash", "t2", command="true")),
            tool_result("t2", "ok"),
        ]
    )
    plan = plan_prune(messages, PruneRules(keep_recent=0), "anthropic", AT, words)
    assert plan.compacted_indexes == ()


def test_prune_can_clear_the_inputs_of_the_calls_whose_results_it_clears() -> None:
    plan = plan_prune(
        parse(session()), PruneRules(keep_recent=2, clear_inputs=True), "anthropic", AT, words
    )
    expected = session()
    expected[2] = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}],
    }
    expected[3] = cleared("t1", "[Old tool result cleared: read_file(path=src/app.py), 120 tokens]")
    assert plan.messages == tuple(parse(expected))
    assert plan.compacted_indexes == (2, 3)
    assert plan.tokens_saved == (120 - 7) + (1 - 1)


def test_a_cleared_result_is_never_cleared_again() -> None:
    first = plan_prune(parse(session()), PruneRules(keep_recent=1), "anthropic", AT, words)
    again = plan_prune(first.messages, PruneRules(keep_recent=1), "anthropic", "later", words)
    assert again == PrunePlan(first.messages, (), 0, 0)


def test_the_placeholder_alone_marks_a_cleared_result() -> None:
    first = plan_prune(parse(session()), PruneRules(keep_recent=1), "anthropic", AT, words)
    assert "compacted_at" not in str([m.model_dump() for m in first.messages])
    again = plan_prune(first.messages, PruneRules(keep_recent=0), "anthropic", "later", words)
    assert again.compacted_indexes == (7,)  # only the result that was kept before


def test_the_marker_field_of_earlier_versions_is_still_recognized() -> None:
    """A history pruned by an earlier version may still carry `compacted_at`; such a
    result is not cleared again (its content is left as the agent sent it)."""
    messages = session()
    messages[3] = {"role": "user", "content": [{**messages[3]["content"][0], "compacted_at": AT}]}
    plan = plan_prune(parse(messages), PruneRules(keep_recent=0), "anthropic", "later", words)
    assert plan.compacted_indexes == (5, 7)


def test_in_the_openai_shape_nothing_but_the_placeholder_marks_the_tool_message() -> None:
    raw = [
        {"role": "user", "content": "Go."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": BIG},
        {"role": "assistant", "content": "Seen."},
    ]
    rules = PruneRules(keep_recent=0, clear_inputs=True)
    plan = plan_prune(from_openai(raw), rules, "openai", AT, words)
    out = to_openai(plan.messages)
    assert out == [
        raw[0],
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "[Old tool result cleared: bash(command=ls), 120 tokens]",
        },
        raw[3],
    ]
    again = plan_prune(from_openai(out), rules, "openai", "later", words)
    assert again.compacted_indexes == ()


def test_the_placeholder_names_the_call_with_its_arguments_cut_to_size() -> None:
    use = ToolUseBlock(
        type="tool_use",
        id="t1",
        name="edit",
        input={"path": "a.py", "new": "x" * 100, "lines": [1, 2]},
    )
    assert call_label(use) == f"edit(path=a.py, new={'x' * 59}…, lines=[1,2])"
    assert placeholder(use, 1234) == (
        f"[Old tool result cleared: edit(path=a.py, new={'x' * 59}…, lines=[1,2]), 1,234 tokens]"
    )
    long = ToolUseBlock(type="tool_use", id="t2", name="run", input={"a": "y\n" * 200})
    assert call_label(long) == f"run(a={' '.join(['y'] * 30)}…)"


PYTEST_RUN = (
    "collected 12 items\n\ntests/test_dates.py ..F.........\n\n"
    + "    context line of the failure\n" * 30
    + "E       AssertionError: assert 2 == 3\n"
    "FAILED tests/test_dates.py::test_parse_iso - AssertionError: assert 2 == 3\n"
    "1 failed, 11 passed in 0.31s\n"
)

TRACEBACK = "Traceback (most recent call last):\n" + BIG + "ValueError: bad 'x'"


def test_a_cleared_result_that_stated_a_failure_keeps_it_in_its_stub() -> None:
    history = [
        user("Fix the dates."),
        assistant(tool_use("bash", "t1", command="pytest -q")),
        tool_result("t1", PYTEST_RUN),  # not flagged: the failure is in the text only
        assistant(tool_use("python", "t2", code="int('x')")),
        tool_result("t2", TRACEBACK),
        assistant(tool_use("bash", "t3", command="ls")),
        tool_result("t3", BIG),
    ]
    plan = plan_prune(parse(history), PruneRules(keep_recent=1), "anthropic", AT, words)
    stubs = [
        tool_result_text(block)
        for message in plan.messages
        for block in message.blocks()
        if isinstance(block, ToolResultBlock)
    ]
    assert stubs == [
        f"[Old tool result cleared: bash(command=pytest -q), {words(PYTEST_RUN)} tokens; failed: "
        "FAILED tests/test_dates.py::test_parse_iso - AssertionError: assert 2 == 3]",
        f"[Old tool result cleared: python(code=int('x')), {words(TRACEBACK)} tokens; failed: "
        "ValueError: bad 'x']",
        BIG,
    ]


def test_the_failure_in_a_stub_is_kept_as_a_summary_keeps_an_error_line() -> None:
    use = ToolUseBlock(type="tool_use", id="t1", name="bash", input={"command": "make"})
    # Whitespace collapsed, then whole up to the summary's bound for an error's key line.
    stub = placeholder(use, 900, "error:   " + "x" * 400)
    assert stub == (
        f"[Old tool result cleared: bash(command=make), 900 tokens; failed: error: {'x' * 193} …]"
    )
    line = "error: " + "y" * (ERROR_LINE_CHARS - 7)
    assert placeholder(use, 900, line).endswith(f"failed: {line}]")
    # Each of two key lines alike.
    two = f"HTTP/1.1 502 Bad Gateway{KEY_LINE_SEPARATOR}failed: {'z' * 300}"
    assert placeholder(use, 900, two) == (
        "[Old tool result cleared: bash(command=make), 900 tokens; failed: HTTP/1.1 502 Bad Gateway"
        f" | failed: {'z' * 192} …]"
    )
    assert placeholder(use, 900) == "[Old tool result cleared: bash(command=make), 900 tokens]"


# A harness that packs its explanation into the failure's one line, ahead of the tool's own
# words (Gemini CLI's self-correcting edit): a synthetic result of that shape.
EXPLAINED_FAILURE = (
    "A secondary check by a reviewer determined that no changes were needed to satisfy the"
    " request. Explanation: the text the edit looked for was not found because the section"
    " it names was already rewritten earlier in this session, so nothing is left to change."
    " Original error: Failed to edit, 0 occurrences found for old_string (- **`draft`**:"
    " Writes a draft.\n- **`send`**: Sends it.). No edits made.\n"
    + "Use the read tool to verify the file's current text before editing again.\n"
    * 20
)


def test_a_stub_keeps_a_long_failure_line_as_far_as_a_summary_would() -> None:
    history = [
        user("Tidy the README."),
        assistant(tool_use("replace", "t1", file_path="README.md", old_string="- draft")),
        tool_result("t1", EXPLAINED_FAILURE, is_error=True),
        assistant(tool_use("bash", "t2", command="ls")),
        tool_result("t2", BIG),
    ]
    plan = plan_prune(parse(history), PruneRules(keep_recent=1), "anthropic", AT, words)
    stub = tool_result_text(plan.messages[2].blocks()[0])  # type: ignore[arg-type]
    first = EXPLAINED_FAILURE.split("\n", 1)[0]
    assert stub == (
        "[Old tool result cleared: replace(file_path=README.md, old_string=- draft),"
        f" {words(EXPLAINED_FAILURE)} tokens; failed: {first[:ERROR_LINE_CHARS]} …]"
    )
    # The summary of the stub names the failure by the same words as that of the result.
    errors = [f.text for f in extract_ledger(list(plan.messages)) if f.kind == "error"]
    before = [f.text for f in extract_ledger(list(parse(history))) if f.kind == "error"]
    assert errors == before == [f"replace `README.md`: {first[:ERROR_LINE_CHARS]} …"]


def test_a_later_ledger_reads_the_failure_a_stub_kept_as_an_error() -> None:
    history = [
        user("Fix the dates."),
        assistant(tool_use("bash", "t1", command="pytest -q")),
        tool_result("t1", PYTEST_RUN),
        assistant(tool_use("bash", "t2", command="ls")),
        tool_result("t2", BIG),
    ]
    plan = plan_prune(parse(history), PruneRules(keep_recent=1), "anthropic", AT, words)
    errors = [f.text for f in extract_ledger(list(plan.messages)) if f.kind == "error"]
    assert errors == [
        "bash `pytest -q`: FAILED tests/test_dates.py::test_parse_iso"
        " - AssertionError: assert 2 == 3"
    ]
    # A stub without a failure is no error, whatever its call.
    assert error_line("[Old tool result cleared: bash(command=make), 9 tokens]") is None
