import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.toolkit.results import (
    ALIASES,
    ToolResultLimits,
    compress_tool_result,
    rule_for,
    stray_fields,
)

LIMITS = ToolResultLimits()


def compress(tool: str, args: dict[str, Any], result: Any, **kw: Any) -> dict[str, Any]:
    limits = kw.pop("limits", LIMITS)
    return compress_tool_result(tool, args, result, limits, **kw).result


def test_ls_keeps_directory_counts_and_first_n_entries() -> None:
    listing = "- /repo/src/\n" + "".join(f"  - m{i}.py\n" for i in range(25)) + "  - pkg/\n"
    assert compress("LS", {"path": "/repo/src"}, listing) == {
        "status": "success",
        "data": {
            "directory": "/repo/src",
            "count": 26,
            "directories": 1,
            "files": 25,
            "entries": [f"m{i}.py" for i in range(20)],
            "truncated": True,
        },
    }


def test_ls_of_a_structured_listing_marks_directories() -> None:
    data = {"entries": [{"name": "a.py", "type": "file"}, {"name": "lib", "type": "directory"}]}
    assert compress("list_dir", {}, {"status": "success", "data": data}) == {
        "status": "success",
        "data": {
            "directory": ".",
            "count": 2,
            "directories": 1,
            "files": 1,
            "entries": ["a.py", "lib/"],
            "truncated": False,
        },
    }


def test_glob_keeps_pattern_hit_count_and_first_ten() -> None:
    hits = "\n".join(f"src/f{i}.py" for i in range(12))
    assert compress("Glob", {"pattern": "src/**/*.py"}, hits) == {
        "status": "success",
        "data": {
            "pattern": "src/**/*.py",
            "count": 12,
            "matches": [f"src/f{i}.py" for i in range(10)],
            "truncated": True,
        },
    }


def test_glob_with_no_hits_counts_zero() -> None:
    assert compress("glob", {"pattern": "*.rs"}, "No files found") == {
        "status": "success",
        "data": {"pattern": "*.rs", "count": 0, "matches": [], "truncated": False},
    }


def test_grep_keeps_a_summary_and_first_five_matches_with_file_and_line() -> None:
    lines = [f"src/m{i % 3}.py:{i + 1}:    def f{i}():" for i in range(7)]
    assert compress("Grep", {"pattern": "def f"}, "\n".join(lines)) == {
        "status": "success",
        "data": {
            "pattern": "def f",
            "summary": "7 matches in 3 files",
            "count": 7,
            "files": 3,
            "matches": [
                {"file": "src/m0.py", "line": 1, "text": "def f0():"},
                {"file": "src/m1.py", "line": 2, "text": "def f1():"},
                {"file": "src/m2.py", "line": 3, "text": "def f2():"},
                {"file": "src/m0.py", "line": 4, "text": "def f3():"},
                {"file": "src/m1.py", "line": 5, "text": "def f4():"},
            ],
            "truncated": True,
        },
    }


def test_grep_files_only_output_lists_files_without_lines() -> None:
    assert compress("rg", {"pattern": "TODO"}, "Found 2 files\nsrc/a.py\nsrc/b.py") == {
        "status": "success",
        "data": {
            "pattern": "TODO",
            "summary": "2 matches in 2 files",
            "count": 2,
            "files": 2,
            "matches": [{"file": "src/a.py"}, {"file": "src/b.py"}],
            "truncated": False,
        },
    }


def test_grep_structured_matches_are_read_by_field() -> None:
    data = {"matches": [{"path": "a.py", "line_number": 3, "content": "x = 1"}]}
    assert compress("search", {"query": "x"}, {"data": data})["data"]["matches"] == [
        {"file": "a.py", "line": 3, "text": "x = 1"}
    ]


def test_read_numbers_the_range_read_starting_at_the_offset() -> None:
    assert compress("read_file", {"path": "a.py", "offset": 10}, "x = 1\ny = 2\n") == {
        "status": "success",
        "data": {
            "file": "a.py",
            "start_line": 10,
            "end_line": 11,
            "content": "    10\tx = 1\n    11\ty = 2",
            "truncated": False,
        },
    }


def test_read_keeps_line_numbers_the_tool_already_wrote() -> None:
    result = "    41→def f():\n    42→    return 1"
    assert compress("Read", {"file_path": "/w/a.py", "offset": 41}, result) == {
        "status": "success",
        "data": {
            "file": "/w/a.py",
            "start_line": 41,
            "end_line": 42,
            "content": result,
            "truncated": False,
        },
    }


def test_read_keeps_at_most_500_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 601))
    data = compress("Read", {"file_path": "big.txt"}, text)["data"]
    assert (data["start_line"], data["end_line"], data["truncated"]) == (1, 500, True)
    assert data["content"].splitlines()[-1] == "   500\tline 500"
    assert len(data["content"].splitlines()) == 500


def test_read_limit_is_configurable_per_call() -> None:
    limits = ToolResultLimits(read_lines=2)
    data = compress("view", {"path": "a"}, "1\n2\n3", limits=limits)["data"]
    assert data == {
        "file": "a",
        "start_line": 1,
        "end_line": 2,
        "content": "     1\t1\n     2\t2",
        "truncated": True,
    }


def test_read_of_an_empty_file_has_no_range() -> None:
    assert compress("cat", {"path": "e"}, "")["data"] == {
        "file": "e",
        "content": "",
        "truncated": False,
    }


def test_read_note_goes_into_data() -> None:
    result = compress(
        "Read", {"file_path": "a.py"}, "x", note="Note: a.py was modified externally."
    )
    assert result["data"]["note"] == "Note: a.py was modified externally."


def test_edit_keeps_file_ranges_and_key_lines() -> None:
    result = (
        "The file /w/a.py has been updated. Here's the result of running `cat -n` on a "
        "snippet of the edited file:\n     3→c\n     4→d\n     5→e\n     9→z"
    )
    args = {"file_path": "/w/a.py", "old_string": "a\nb", "new_string": "c\nd\ne"}
    assert compress("Edit", args, result) == {
        "status": "success",
        "data": {
            "file": "/w/a.py",
            "edits": 1,
            "removed_lines": 2,
            "added_lines": 3,
            "ranges": ["3-5", "9"],
            "key_lines": "c\nd\ne",
            "truncated": False,
        },
    }


def test_multiedit_of_a_large_diff_keeps_only_the_first_key_lines() -> None:
    edits = [
        {"old_string": "old", "new_string": "\n".join(f"n{i}_{j}" for j in range(15))}
        for i in range(2)
    ]
    data = compress("MultiEdit", {"file_path": "a.py", "edits": edits}, "Applied 2 edits")["data"]
    assert data == {
        "file": "a.py",
        "edits": 2,
        "removed_lines": 2,
        "added_lines": 30,
        "key_lines": "\n".join([*(f"n0_{j}" for j in range(15)), *(f"n1_{j}" for j in range(5))]),
        "truncated": True,
    }


def test_write_of_a_new_file_keeps_its_first_fifty_lines() -> None:
    content = "\n".join(f"row {i}" for i in range(80))
    args = {"file_path": "new.py", "content": content}
    assert compress("Write", args, "File created successfully at: new.py") == {
        "status": "success",
        "data": {
            "file": "new.py",
            "action": "created",
            "lines": 80,
            "head": "\n".join(f"row {i}" for i in range(50)),
            "truncated": True,
        },
    }


def test_write_over_an_existing_file_says_overwritten() -> None:
    data = compress("write_file", {"path": "a", "content": "x"}, "The file a has been updated")
    assert data["data"] == {
        "file": "a",
        "action": "overwritten",
        "lines": 1,
        "head": "x",
        "truncated": False,
    }


def test_bash_keeps_a_stdout_summary_and_the_last_twenty_stderr_lines() -> None:
    result = {
        "status": "error",
        "data": {
            "stdout": "\n".join(f"out {i}" for i in range(100)),
            "stderr": "\n".join(f"err {i}" for i in range(30)),
            "exit_code": 1,
        },
        "error": {"code": "exit_status", "message": "command exited with 1"},
        "text": "the whole output again",
        "stats": {"duration_ms": 812},
        "context": {"cwd": "/w"},
    }
    assert compress("Bash", {"command": "pytest -q"}, result) == {
        "status": "error",
        "data": {
            "command": "pytest -q",
            "exit_code": 1,
            "stdout": {
                "lines": 100,
                "chars": 689,
                "head": "out 0\nout 1\nout 2",
                "tail": "out 95\nout 96\nout 97\nout 98\nout 99",
            },
            "stderr": {"lines": 30, "tail": "\n".join(f"err {i}" for i in range(10, 30))},
            "truncated": True,
        },
        "error": {"code": "exit_status", "message": "command exited with 1"},
    }


def test_bash_string_result_is_all_stdout() -> None:
    assert compress("shell", {"command": "ls"}, "a\nb") == {
        "status": "success",
        "data": {
            "command": "ls",
            "stdout": {"lines": 2, "chars": 3, "head": "a\nb"},
            "truncated": False,
        },
    }


def test_a_string_error_result_keeps_the_whole_message_as_error() -> None:
    long = "Traceback:\n" + "x" * 5000
    assert compress("bash", {"command": "false"}, long, is_error=True) == {
        "status": "error",
        "error": {"message": long},
    }


def test_todowrite_keeps_only_a_recap() -> None:
    todos = [
        {"content": "Read the spec", "status": "completed"},
        {"content": "Fix the parser", "status": "in_progress"},
        {"content": "Run the tests", "status": "pending"},
        {"content": "Update docs", "status": "pending"},
    ]
    result = "Todos have been modified successfully."
    assert compress("TodoWrite", {"todos": todos}, result) == {
        "status": "success",
        "data": {
            "recap": "4 todos: 1 completed, 1 in progress, 2 pending",
            "in_progress": ["Fix the parser"],
        },
    }


def test_unknown_tools_fall_back_to_the_result_when_short() -> None:
    assert compress("mcp__jira__get_issue", {"id": 1}, {"data": {"key": "X-1"}}) == {
        "status": "success",
        "data": {"result": {"key": "X-1"}},
    }


def test_unknown_tools_fall_back_to_a_summary_and_head_when_long() -> None:
    text = "line\n" * 1000
    assert compress("web_fetch", {}, text, limits=ToolResultLimits(fallback_chars=12)) == {
        "status": "success",
        "data": {
            "summary": "1000 lines, 5000 characters",
            "head": "line\nline\nli",
            "fallback": True,
            "truncated": True,
        },
    }


def test_structured_result_drops_text_stats_and_context_and_keeps_markers() -> None:
    result = {
        "status": "success",
        "data": {"files": ["a.py"], "truncated": True, "applied": True},
        "text": "a.py",
        "stats": {"ms": 3},
        "context": {"pattern": "*.py"},
    }
    assert compress("Glob", {"pattern": "*.py"}, result) == {
        "status": "success",
        "data": {
            "pattern": "*.py",
            "count": 1,
            "matches": ["a.py"],
            "truncated": True,
            "applied": True,
        },
    }


def test_structured_result_without_data_compresses_its_text() -> None:
    result = {"status": "success", "text": "src/a.py:3:x = 1"}
    assert compress("grep", {"pattern": "x"}, result)["data"]["matches"] == [
        {"file": "src/a.py", "line": 3, "text": "x = 1"}
    ]


def test_structured_error_keeps_code_and_message_whole() -> None:
    error = {"code": "ENOENT", "message": "no such file: " + "d/" * 300}
    assert compress("Read", {"file_path": "x"}, {"status": "error", "error": error}) == {
        "status": "error",
        "error": error,
    }


def test_content_is_the_result_as_json_text() -> None:
    out = compress_tool_result("LS", {}, "a.py", LIMITS)
    assert json.loads(out.content) == out.result
    assert out.content.startswith('{"status": "success", "data": {"directory": "."')
    assert out.original_chars == 4


@pytest.mark.parametrize(
    ("tool", "args", "rule"),
    [
        ("Read", {}, "read"),
        ("read_file", {}, "read"),
        ("READ-FILE", {}, "read"),
        ("view", {}, "read"),
        ("LS", {}, "ls"),
        ("list_directory", {}, "ls"),
        ("Glob", {}, "glob"),
        ("Grep", {}, "grep"),
        ("search_file_content", {}, "grep"),
        ("Edit", {}, "edit"),
        ("MultiEdit", {}, "edit"),
        ("multi_edit", {}, "edit"),
        ("Write", {}, "write"),
        ("create_file", {}, "write"),
        ("Bash", {}, "bash"),
        ("bash", {}, "bash"),
        ("shell", {}, "bash"),
        ("run_shell_command", {}, "bash"),
        ("TodoWrite", {}, "todo"),
        ("todo_write", {}, "todo"),
        ("str_replace_editor", {"command": "view"}, "read"),
        ("str_replace_editor", {"command": "create"}, "write"),
        ("str_replace_editor", {"command": "str_replace"}, "edit"),
        ("str_replace_editor", {"command": "unknown"}, "fallback"),
        ("str_replace_editor", {}, "fallback"),
        ("WebFetch", {}, "fallback"),
    ],
)
def test_tool_names_match_case_insensitively_with_aliases(
    tool: str, args: dict[str, Any], rule: str
) -> None:
    assert rule_for(tool, args) == rule


def test_inputs_are_not_mutated() -> None:
    args = {"todos": [{"content": "a", "status": "pending"}]}
    result = {"status": "success", "data": {"truncated": False}, "stats": {}}
    before = json.dumps([args, result])
    compress("TodoWrite", args, result)
    assert json.dumps([args, result]) == before


def test_read_drops_the_tools_preamble_before_its_numbered_lines() -> None:
    result = (
        "Here's the result of running `cat -n` on /repo/a.py:\n"
        "     7\tdef f():\n     8\t\n     9\t    return 1\n"
    )
    args = {"command": "view", "path": "/repo/a.py", "view_range": [7, 9]}
    assert compress("str_replace_editor", args, result)["data"] == {
        "file": "/repo/a.py",
        "start_line": 7,
        "end_line": 9,
        "content": "     7\tdef f():\n     8\t\n     9\t    return 1",
        "truncated": False,
    }


def test_a_plain_file_with_a_numbered_looking_line_is_numbered_whole() -> None:
    data = compress("Read", {"file_path": "t"}, "title\n  2\tnot a number column\nend")["data"]
    assert data["content"] == "     1\ttitle\n     2\t  2\tnot a number column\n     3\tend"


def test_a_claude_code_structured_read_keeps_its_start_and_total() -> None:
    data = {"type": "text", "file": {"content": "a\nb", "startLine": 20, "totalLines": 90}}
    assert compress("Read", {"file_path": "x.py"}, {"data": data})["data"] == {
        "file": "x.py",
        "start_line": 20,
        "end_line": 21,
        "total_lines": 90,
        "content": "    20\ta\n    21\tb",
        "truncated": False,
    }


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
NAMES = st.sampled_from([*ALIASES, "str_replace_editor", "unknown_tool"]) | st.text(max_size=12)
FIELDS = st.sampled_from(
    ["status", "data", "error", "text", "stats", "context", "path", "command", "todos", "edits"]
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    tool=NAMES,
    args=st.dictionaries(FIELDS, JSON, max_size=4),
    result=st.text(max_size=200) | st.dictionaries(FIELDS, JSON, max_size=5),
    is_error=st.booleans(),
)
def test_any_result_of_any_tool_compresses_to_its_own_json(
    tool: str, args: dict[str, Any], result: Any, is_error: bool
) -> None:
    out = compress_tool_result(tool, args, result, LIMITS, is_error=is_error)
    assert json.loads(out.content) == out.result
    assert set(out.result) <= {"status", "data", "error"}
    assert out.result["status"] in ("success", "error") or isinstance(result, dict)


def test_a_list_of_content_blocks_reads_as_its_text() -> None:
    blocks = [
        {"type": "text", "text": "a.py"},
        {"type": "image", "source": {}},
        {"type": "text", "text": "b.py"},
    ]
    assert compress("Glob", {"pattern": "*.py"}, blocks)["data"]["matches"] == ["a.py", "b.py"]
    assert compress("Glob", {}, blocks, is_error=True) == {
        "status": "error",
        "error": {"message": "a.py\nb.py"},
    }


def test_an_object_without_the_envelope_is_the_data_itself() -> None:
    shell = {"stdout": "collected 3\n1 failed", "stderr": "E assert 0 == 1", "exit_code": 1}
    assert compress("Bash", {"command": "pytest"}, shell) == compress(
        "Bash", {"command": "pytest"}, {"status": "success", "data": shell}
    )
    assert compress("Frob", {}, {"rows": 2, "ok": True}) == {
        "status": "success",
        "data": {"result": {"rows": 2, "ok": True}},
    }


def test_fields_beside_data_or_text_are_named_as_stray() -> None:
    assert stray_fields({"data": {"a": 1}, "stderr": "x", "stats": {}}) == ["stderr"]
    assert stray_fields({"text": "out", "exit_code": 2}) == ["exit_code"]
    assert stray_fields({"stdout": "x", "status": "error"}) == []
    assert stray_fields({"status": "success", "data": {}, "error": None}) == []


def test_bash_keeps_the_fields_it_does_not_summarize() -> None:
    """Claude Code's Bash answers `{stdout, stderr, interrupted, isImage}`: the flags come
    back as sent, beside the stdout summary, not dropped."""
    shell = {
        "stdout": "\n".join(f"ok {i}" for i in range(50)),
        "stderr": "",
        "interrupted": True,
        "isImage": False,
        "backgroundTaskId": None,
    }
    data = compress("Bash", {"command": "make"}, shell)["data"]
    assert {k: data[k] for k in ("interrupted", "isImage", "backgroundTaskId")} == {
        "interrupted": True,
        "isImage": False,
        "backgroundTaskId": None,
    }
    assert data["stdout"]["lines"] == 50
    assert data["truncated"] is True


def test_bash_cuts_a_long_field_it_does_not_summarize_and_keeps_its_name() -> None:
    shell = {"stdout": "ok", "stderr": ["E one", "E two"], "log": "L" * 30}
    data = compress("Bash", {}, shell, limits=ToolResultLimits(fallback_chars=20))["data"]
    assert data["stderr"] == ["E one", "E two"]
    assert data["log"] == "L" * 20 + "… [10 more characters]"
    assert data["truncated"] is True


def test_an_unknown_tool_s_long_object_keeps_every_field() -> None:
    """A structured result over the limit is cut field by field, never as one JSON text:
    the exit code and the stderr after a long stdout survive."""
    result = {"stdout": "x" * 5000, "stderr": "boom", "returncode": 2, "meta": {"cwd": "/r"}}
    data = compress("run_tests", {}, result, limits=ToolResultLimits(fallback_chars=1000))["data"]
    assert data == {
        "summary": "1 line, 5072 characters",
        "result": {
            "stdout": "x" * 250 + "… [4750 more characters]",
            "stderr": "boom",
            "returncode": 2,
            "meta": {"cwd": "/r"},
        },
        "fallback": True,
        "truncated": True,
    }
