from app.core.messages import dump_messages
from app.core.toolkit.layers import ContextLayers, assemble_layers, pick_rules_file
from tests.builders import assistant, parse, system, tool_result, tool_use, user


def test_layers_come_in_seed_004_a1_order() -> None:
    history = parse([system("## 📌 Archived Session Summary"), user("hi"), assistant("hello")])
    messages, layers = assemble_layers(
        ContextLayers(
            system="You are an agent.",
            tools="Tools: Read.",
            rules="Never push to main.",
            history=history,
            current_input="Fix the bug.",
            todo_recap="1 todo: 1 pending",
        )
    )
    assert dump_messages(messages) == [
        {"role": "system", "content": "You are an agent.\n\nTools: Read."},
        {"role": "system", "content": "[Project rules] CODE_LAW.md:\nNever push to main."},
        {"role": "system", "content": "## 📌 Archived Session Summary"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
        {"role": "user", "content": "Fix the bug.\n\n1 todo: 1 pending"},
    ]
    assert layers == ["L1", "L2", "L3", "L3", "L3", "input"]


def test_no_rules_means_no_l2_message_and_blank_rules_count_as_none() -> None:
    for rules in ("", "  \n"):
        messages, layers = assemble_layers(
            ContextLayers(system="S", rules=rules, current_input="go")
        )
        assert dump_messages(messages) == [
            {"role": "system", "content": "S"},
            {"role": "user", "content": "go"},
        ]
        assert layers == ["L1", "input"]


def test_input_after_tool_results_joins_that_user_message() -> None:
    call = tool_use("Read", "toolu_1", file_path="a.py")
    history = parse([user("read a.py"), assistant(call), tool_result("toolu_1", "x = 1")])
    messages, layers = assemble_layers(
        ContextLayers(history=history, current_input="and now?", todo_recap="recap")
    )
    assert dump_messages(messages)[-1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = 1"},
            {"type": "text", "text": "and now?\n\nrecap"},
        ],
    }
    assert layers == ["L3", "L3", "L3+input"]


def test_input_after_a_string_user_message_is_joined_by_a_blank_line() -> None:
    messages, layers = assemble_layers(
        ContextLayers(history=parse([user("first")]), todo_recap="recap")
    )
    assert dump_messages(messages) == [{"role": "user", "content": "first\n\nrecap"}]
    assert layers == ["L3+input"]


def test_nothing_to_append_leaves_the_history_as_it_is() -> None:
    history = parse([user("a"), assistant("b")])
    messages, layers = assemble_layers(ContextLayers(history=history))
    assert messages == history
    assert layers == ["L3", "L3"]


def test_the_history_is_not_mutated() -> None:
    history = parse([user("a")])
    before = dump_messages(history)
    assemble_layers(ContextLayers(history=history, current_input="b"))
    assert dump_messages(history) == before


def test_rules_file_is_found_in_any_case_preferring_the_exact_name() -> None:
    assert pick_rules_file(["README.md", "code_law.md", "CODE_LAW.md"]) == "CODE_LAW.md"
    assert pick_rules_file(["code_law.md", "Code_Law.md"]) == "code_law.md"
    assert pick_rules_file(["Code_Law.MD", "a"]) == "Code_Law.MD"
    assert pick_rules_file(["CODE_LAW.txt", "CODE_LAW"]) is None
