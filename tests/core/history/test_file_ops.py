from __future__ import annotations

from typing import Any

import pytest

from app.core.history.facts import extract_facts
from app.core.history.file_ops import FileOp, FileTracker, Vocabulary, parse_file_tool
from app.core.messages import ToolUseBlock
from app.core.summary.extractive import extract_summary
from tests.builders import assistant, parse, tool_result, tool_use, user


def ops(name: str, **inputs: Any) -> list[tuple[str, str]]:
    call = ToolUseBlock.model_validate(tool_use(name, **inputs))
    return [(op.kind, op.path) for op in FileTracker().operations(call)]


@pytest.mark.parametrize(
    ("name", "inputs", "expected"),
    [
        # Claude Code
        ("Read", {"file_path": "a.py"}, [("read", "a.py")]),
        ("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}, [("edited", "a.py")]),
        ("MultiEdit", {"file_path": "a.py", "edits": []}, [("edited", "a.py")]),
        ("Write", {"file_path": "b.py", "content": "x"}, [("created", "b.py")]),
        # Cline
        ("read_file", {"path": "a.py"}, [("read", "a.py")]),
        ("replace_in_file", {"path": "a.py", "diff": "..."}, [("edited", "a.py")]),
        ("write_to_file", {"path": "b.ts", "content": "x"}, [("created", "b.ts")]),
        # Cursor
        ("edit_file", {"target_file": "c.py", "code_edit": "x"}, [("edited", "c.py")]),
        ("read_file", {"target_file": "c.py"}, [("read", "c.py")]),
        ("delete_file", {"target_file": "c.py"}, [("deleted", "c.py")]),
        # OpenHands / Anthropic's text editor
        ("str_replace_editor", {"command": "view", "path": "/r/a.py"}, [("read", "/r/a.py")]),
        ("str_replace_editor", {"command": "create", "path": "n.py"}, [("created", "n.py")]),
        ("str_replace_editor", {"command": "str_replace", "path": "a.py"}, [("edited", "a.py")]),
        ("str_replace_editor", {"command": "insert", "path": "a.py"}, [("edited", "a.py")]),
        # SWE-agent: the path is the command's second word
        ("open", {"command": 'open "src/x.py" 120'}, [("read", "src/x.py")]),
        ("create", {"command": "create repro.py"}, [("created", "repro.py")]),
    ],
)
def test_the_common_agents_file_tools(
    name: str, inputs: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert ops(name, **inputs) == expected


def test_swe_agent_edit_changes_the_file_opened_last() -> None:
    tracker = FileTracker()
    calls = [
        tool_use("open", command="open src/x.py"),
        tool_use("edit", command="edit 3:4\nnew\nend_of_edit"),
    ]
    found = [tracker.operations(ToolUseBlock.model_validate(c)) for c in calls]
    assert found == [[FileOp("read", "src/x.py")], [FileOp("edited", "src/x.py")]]


CODEX_PATCH = """*** Begin Patch
*** Add File: docs/new.md
+hello
*** Update File: src/app.py
@@ def main():
-    pass
+    run()
*** Delete File: old.txt
*** End Patch"""


def test_codex_apply_patch_paths_come_from_the_patch_text() -> None:
    expected = [("created", "docs/new.md"), ("edited", "src/app.py"), ("deleted", "old.txt")]
    assert ops("apply_patch", input=CODEX_PATCH) == expected
    # Codex's shell form: `apply_patch` as the argv of a shell call.
    assert ops("shell", command=["apply_patch", CODEX_PATCH]) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat a.txt | head -5", [("read", "a.txt")]),
        ("sed -i 's/a/b/' src/app.py", [("edited", "src/app.py")]),
        ("sed -n '1,20p' src/app.py", [("read", "src/app.py")]),
        ("echo hi > out.log 2>&1", [("created", "out.log")]),
        ("echo more >> notes.md", [("edited", "notes.md")]),
        ("python gen.py | tee build/report.txt", [("created", "build/report.txt")]),
        ("touch a.flag && rm -rf tmp/cache", [("created", "a.flag"), ("deleted", "tmp/cache")]),
        ("cp a.cfg b.cfg", [("created", "b.cfg")]),
        ("cat > conf.ini <<'EOF'\n[x]\nrm = y\nEOF", [("created", "conf.ini")]),
        ("python -m pytest -q", []),
        # A `>` inside quotes is a character of an argument, not a redirect.
        ("pip install 'fire>=0.3.1' \"rich>=10\"", []),
        ("grep -n '->' src/a.py > hits.txt", [("created", "hits.txt")]),
        ('echo "a > b" >out.md', [("created", "out.md")]),
        ("sort data.csv > 'sorted data.csv'", [("created", "sorted data.csv")]),
        ("echo x>y.txt", [("created", "y.txt")]),
    ],
)
def test_shell_commands_that_read_or_write_files(
    command: str, expected: list[tuple[str, str]]
) -> None:
    assert ops("run_terminal_cmd", command=command) == expected
    assert ops("bash", command=["bash", "-lc", command]) == expected


def test_a_request_adds_tools_of_its_own() -> None:
    vocabulary = Vocabulary.from_specs(
        ["save_note.target:created", "editor.file[command=write]:edited"]
    )
    messages = parse(
        [
            user("Go."),
            assistant(
                tool_use("save_note", "t1", target="notes/a.md"),
                tool_use("editor", "t2", command="write", file="src/b.py"),
                tool_use("editor", "t3", command="show", file="src/c.py"),
            ),
            tool_result("t1", "ok"),
        ]
    )
    assert extract_facts(messages).files_created == ()
    facts = extract_facts(messages, vocabulary)
    assert (facts.files_created, facts.files_edited) == (("notes/a.md",), ("src/b.py",))


@pytest.mark.parametrize("spec", ["save_note", "save_note.target", "a.b:renamed", "a.b[x=y]:read"])
def test_a_bad_file_tool_spec_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match=r"tool_name\.path_field:kind"):
        parse_file_tool(spec)


def test_file_operations_list_files_written_and_edited_not_only_read() -> None:
    messages = parse(
        [
            user("Migrate storage to GCS."),
            assistant(tool_use("read_file", "t1", path="src/firebase.ts")),
            tool_result("t1", "..."),
            assistant(tool_use("write_to_file", "t2", path="src/gcs.ts", content="x")),
            tool_result("t2", "The content was successfully saved to src/gcs.ts."),
            assistant(tool_use("replace_in_file", "t3", path="src/upload.ts", diff="...")),
            tool_result("t3", "The content was successfully saved to src/upload.ts."),
        ]
    )
    summary = extract_summary(messages, 1200)
    assert "- Read: src/firebase.ts\n- Created: src/gcs.ts\n- Edited: src/upload.ts" in summary


@pytest.mark.parametrize(
    ("name", "inputs", "expected"),
    [
        # Cline's native tool calls
        (
            "write_to_file",
            {"absolutePath": "/w/src/app.ts", "content": "x"},
            [("created", "/w/src/app.ts")],
        ),
        (
            "replace_in_file",
            {"absolutePath": "/w/src/app.ts", "diff": "..."},
            [("edited", "/w/src/app.ts")],
        ),
        # Gemini CLI
        ("read_file", {"absolute_path": "/p/main.go"}, [("read", "/p/main.go")]),
        (
            "replace",
            {"file_path": "/p/main.go", "old_string": "a", "new_string": "b"},
            [("edited", "/p/main.go")],
        ),
        (
            "read_many_files",
            {"paths": ["a.md", "docs/b.md"]},
            [
                ("read", "a.md"),
                ("read", "docs/b.md"),
            ],
        ),
        # opencode
        (
            "edit",
            {"filePath": "/r/x.py", "oldString": "a", "newString": "b"},
            [("edited", "/r/x.py")],
        ),
        ("write", {"filePath": "/r/y.py", "content": "x"}, [("created", "/r/y.py")]),
        # Continue
        (
            "create_new_file",
            {"filepath": "src/new.ts", "contents": "x"},
            [("created", "src/new.ts")],
        ),
        (
            "edit_existing_file",
            {"filepath": "src/old.ts", "changes": "x"},
            [("edited", "src/old.ts")],
        ),
        # Windsurf
        ("view_file", {"AbsolutePath": "/c/a.rs"}, [("read", "/c/a.rs")]),
        ("replace_file_content", {"TargetFile": "/c/a.rs"}, [("edited", "/c/a.rs")]),
        # Goose
        (
            "text_editor",
            {"command": "write", "path": "n.md", "file_text": "x"},
            [("created", "n.md")],
        ),
    ],
)
def test_the_path_fields_of_other_agents_documented_schemas(
    name: str, inputs: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert ops(name, **inputs) == expected
