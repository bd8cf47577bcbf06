"""The context-engineering toolkit through the real ASGI stack."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.builders import assistant, bulk_round, read_round, system, tool_use, user

pytestmark = pytest.mark.anyio

T0 = 1_700_000_000_000_000_000


def reminder(path: str) -> str:
    return (
        "<system-reminder>\n"
        f"The user mentioned @{path}.\n"
        "You MUST read this file with the Read tool before answering.\n"
        "</system-reminder>"
    )


def touch(path: Path, mtime_ns: int) -> None:
    os.utime(path, ns=(mtime_ns, mtime_ns))


async def test_compress_tool_result_answers_the_history_form(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/compress-tool-result",
        json={"tool": "read_file", "input": {"path": "a.py"}, "result": "x = 1\ny = 2"},
    )
    content = (
        '{"status": "success", "data": {"file": "a.py", "start_line": 1, "end_line": 2, '
        '"content": "     1\\tx = 1\\n     2\\ty = 2", "truncated": false}}'
    )
    assert response.status_code == 200
    assert response.json() == {
        "tool": "read_file",
        "rule": "read",
        "result": {
            "status": "success",
            "data": {
                "file": "a.py",
                "start_line": 1,
                "end_line": 2,
                "content": "     1\tx = 1\n     2\ty = 2",
                "truncated": False,
            },
        },
        "content": content,
        "original_chars": 11,
        "compressed_chars": len(content),
        "warnings": [],
    }


async def test_limits_come_from_settings_and_each_request_may_override_them(
    client_for: Callable[..., Any],
) -> None:
    client = await client_for(tool_result_glob_hits=2)
    body: dict[str, Any] = {"tool": "Glob", "input": {"pattern": "*"}, "result": "a\nb\nc\nd"}
    first = (await client.post("/compress-tool-result", json=body)).json()
    assert first["result"]["data"]["matches"] == ["a", "b"]
    body["limits"] = {"glob_hits": 3}
    second = (await client.post("/compress-tool-result", json=body)).json()
    assert second["result"]["data"]["matches"] == ["a", "b", "c"]


async def test_a_structured_error_result_keeps_status_and_error_and_drops_the_rest(
    client: httpx.AsyncClient,
) -> None:
    result = {
        "status": "error",
        "data": {"stdout": "", "stderr": "boom", "exit_code": 2},
        "error": {"code": "exit_status", "message": "exited with 2"},
        "text": "boom",
        "stats": {"ms": 4},
        "context": {"cwd": "/w"},
    }
    body = {"tool": "Bash", "input": {"command": "make"}, "result": result}
    data = (await client.post("/compress-tool-result", json=body)).json()
    assert data["result"] == {
        "status": "error",
        "data": {
            "command": "make",
            "exit_code": 2,
            "stdout": {"lines": 0, "chars": 0},
            "stderr": {"lines": 1, "tail": "boom"},
            "truncated": False,
        },
        "error": {"code": "exit_status", "message": "exited with 2"},
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"tool": "", "result": "x"}, "tool"),
        ({"tool": "Read"}, "result"),
        ({"tool": "Read", "result": "x", "limits": {"read_lines": 0}}, "limits.read_lines"),
        ({"tool": "Read", "result": "x", "limits": {"lines": 3}}, "limits.lines"),
        ({"tool": "Read", "result": "x", "session_id": "../x"}, "session_id"),
        ({"tool": "Read", "result": 3}, "result"),
    ],
)
async def test_bad_compress_requests_get_422_naming_the_field(
    client: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    response = await client.post("/compress-tool-result", json=body)
    assert response.status_code == 422
    assert [d["field"] for d in response.json()["details"]] == [field]


async def test_a_reread_of_a_changed_file_gets_the_note_on_any_replica(
    client_for: Callable[..., Any], workdir: Path
) -> None:
    (workdir / "src").mkdir()
    path = workdir / "src" / "a.py"
    path.write_text("x = 1\n")
    touch(path, T0)
    replica_a = await client_for()
    replica_b = await client_for()  # another process on the same data directory
    body = {
        "tool": "Read",
        "input": {"file_path": "src/a.py"},
        "result": "x = 1",
        "session_id": "s-1",
    }
    first = (await replica_a.post("/compress-tool-result", json=body)).json()
    again = (await replica_b.post("/compress-tool-result", json=body)).json()
    assert "note" not in first["result"]["data"]
    assert "note" not in again["result"]["data"]
    touch(path, T0 + 1)
    body["input"] = {"file_path": f"{workdir}/src/./a.py"}  # the same file, named otherwise
    changed = (await replica_b.post("/compress-tool-result", json=body)).json()
    assert changed["result"]["data"]["note"] == (
        f"Note: {workdir}/src/./a.py was modified externally."
    )
    assert changed["warnings"] == []
    after = (await replica_a.post("/compress-tool-result", json=body)).json()
    assert "note" not in after["result"]["data"]
    other = (
        await replica_a.post("/compress-tool-result", json=body | {"session_id": "s-2"})
    ).json()
    assert "note" not in other["result"]["data"]


async def test_a_read_outside_the_workdir_is_compressed_without_freshness(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "tool": "Read",
        "input": {"file_path": "../secret"},
        "result": "s",
        "session_id": "s-1",
    }
    data = (await client.post("/compress-tool-result", json=body)).json()
    assert data["result"]["data"]["content"] == "     1\ts"
    assert data["warnings"] == ["freshness of ../secret not tracked: outside_workdir"]


async def test_preprocess_input_reminds_existing_files_and_reports_missing_ones(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    (workdir / "src" / "utils").mkdir(parents=True)
    (workdir / "src" / "utils" / "auth.ts").write_text("export {}\n")
    text = "Why does @src/utils/auth.ts reject user@example.com? See @docs/missing.md and @../x."
    data = (await client.post("/preprocess-input", json={"text": text})).json()
    assert data == {
        "text": f"{text}\n\n{reminder('src/utils/auth.ts')}",
        "mentions": ["src/utils/auth.ts", "docs/missing.md", "../x"],
        "reminded": ["src/utils/auth.ts"],
        "more_count": 0,
        "missing": [
            {"path": "docs/missing.md", "reason": "not_found"},
            {"path": "../x", "reason": "outside_workdir"},
        ],
        "warnings": [],
    }


async def test_preprocess_input_names_five_then_and_n_more_without_duplicates(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    for i in range(7):
        (workdir / f"f{i}.py").write_text("")
    text = " ".join(f"@f{i}.py" for i in [0, 1, 0, 2, 3, 4, 5, 6, 1])
    data = (await client.post("/preprocess-input", json={"text": text})).json()
    blocks = [reminder(f"f{i}.py") for i in range(5)]
    more = "<system-reminder>\n(and 2 more…)\n</system-reminder>"
    assert data["text"] == text + "\n\n" + "\n".join([*blocks, more])
    assert data["mentions"] == [f"f{i}.py" for i in range(7)]
    assert data["reminded"] == [f"f{i}.py" for i in range(5)]
    assert data["more_count"] == 2


async def test_preprocess_input_without_the_check_reminds_every_mention(
    client: httpx.AsyncClient,
) -> None:
    body = {"text": "@nope.py", "check_exists": False, "limit": 0}
    data = (await client.post("/preprocess-input", json=body)).json()
    assert data["text"] == "@nope.py\n\n<system-reminder>\n(and 1 more…)\n</system-reminder>"
    assert data["missing"] == []


async def test_input_without_mentions_comes_back_unchanged(client: httpx.AsyncClient) -> None:
    data = (await client.post("/preprocess-input", json={"text": "mail me@x.io"})).json()
    assert (data["text"], data["mentions"], data["missing"]) == ("mail me@x.io", [], [])


async def test_project_rules_are_found_in_any_case_or_reported_absent(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    assert (await client.get("/project-rules")).json() == {
        "found": False,
        "path": None,
        "content": None,
        "skipped": None,
    }
    (workdir / "code_law.md").write_text("Never edit generated files.\n")
    assert (await client.get("/project-rules")).json() == {
        "found": True,
        "path": "code_law.md",
        "content": "Never edit generated files.\n",
        "skipped": None,
    }


async def test_project_rules_over_the_size_limit_are_skipped(
    client_for: Callable[..., Any], workdir: Path
) -> None:
    client = await client_for(project_rules_max_bytes=4)
    (workdir / "CODE_LAW.md").write_text("too long")
    assert (await client.get("/project-rules")).json() == {
        "found": False,
        "path": "CODE_LAW.md",
        "content": None,
        "skipped": "too_large",
    }


async def test_project_rules_symlinked_outside_are_refused(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    secret = workdir.parent / "secret.md"
    secret.write_text("secret")
    (workdir / "CODE_LAW.md").symlink_to(secret)
    data = (await client.get("/project-rules")).json()
    assert (data["found"], data["content"], data["skipped"]) == (False, None, "outside_workdir")


async def test_assemble_puts_the_layers_in_seed_004_order(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    (workdir / "CODE_LAW.md").write_text("Never push to main.")
    (workdir / "a.py").write_text("")
    history = [
        system("## 📌 Archived Session Summary"),
        user("hi"),
        assistant("hello"),
    ]
    body = {
        "system": "You are an agent.",
        "tools": "Tools: Read(file_path).",
        "messages": history,
        "input": "Check @a.py",
        "todo_recap": "2 todos: 1 completed, 1 pending",
    }
    data = (await client.post("/assemble", json=body)).json()
    assert data["messages"] == [
        {"role": "system", "content": "You are an agent.\n\nTools: Read(file_path)."},
        {"role": "system", "content": "[Project rules] CODE_LAW.md:\nNever push to main."},
        *history,
        {
            "role": "user",
            "content": f"Check @a.py\n\n{reminder('a.py')}\n\n2 todos: 1 completed, 1 pending",
        },
    ]
    assert data["layers"] == ["L1", "L2", "L3", "L3", "L3", "input"]
    assert (data["format"], data["rules_source"], data["rules_path"]) == (
        "anthropic",
        "workdir",
        "CODE_LAW.md",
    )
    assert data["mentions"]["reminded"] == ["a.py"]


async def test_assemble_in_openai_shape_labels_every_message_sent(
    client: httpx.AsyncClient,
) -> None:
    history = [
        {"role": "user", "content": "run it"},
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
    ]
    body = {"system": "S", "rules": "R", "messages": history, "input": "next", "preprocess": False}
    data = (await client.post("/assemble", json=body)).json()
    assert data["format"] == "openai"
    assert data["messages"] == [
        {"role": "system", "content": "S"},
        {"role": "system", "content": "[Project rules] CODE_LAW.md:\nR"},
        *history,
        {"role": "user", "content": [{"type": "text", "text": "next"}]},
    ]
    assert data["layers"] == ["L1", "L2", "L3", "L3", "L3+input", "L3+input", "L3+input"]
    assert (data["rules_source"], data["mentions"]) == ("request", None)


async def test_assemble_with_empty_rules_injects_none(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    (workdir / "CODE_LAW.md").write_text("rules")
    data = (await client.post("/assemble", json={"rules": "", "input": "go"})).json()
    assert data["messages"] == [{"role": "user", "content": "go"}]
    assert (data["layers"], data["rules_source"], data["rules_path"]) == (["input"], "none", None)


async def test_assemble_refuses_a_broken_history_naming_its_index(
    client: httpx.AsyncClient,
) -> None:
    call = tool_use("Read", "toolu_9", file_path="a.py")
    history = [user("a"), assistant(call), user("no result")]
    response = await client.post("/assemble", json={"messages": history, "input": "x"})
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "invalid_conversation"
    assert [d["field"] for d in body["details"]] == ["messages[1]"]


async def test_assemble_refuses_input_after_an_unanswered_tool_call(
    client: httpx.AsyncClient,
) -> None:
    call = tool_use("Read", "toolu_8", file_path="a.py")
    history = [user("a"), assistant(call)]
    pending = await client.post("/assemble", json={"messages": history})
    assert pending.status_code == 200
    refused = await client.post("/assemble", json={"messages": history, "input": "x"})
    assert refused.status_code == 422
    assert refused.json()["details"][0]["message"].startswith("tool_use_unanswered")


async def test_compact_with_a_session_notes_a_restored_file_that_changed(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    (workdir / "src").mkdir()
    path = workdir / "src" / "app.py"
    path.write_text("def f():\n    return 1\n")
    touch(path, T0)
    messages = [
        system("You are a coding agent."),
        user("Fix src/app.py."),
        *bulk_round(),
        *read_round("src/app.py", "def f():"),
        assistant("Done."),
    ]
    request = {"messages": messages, "force": True, "session_id": "s-9"}
    first = (await client.post("/compact", json=request)).json()
    assert first["messages"][3]["content"] == (
        "[Restored after compact] src/app.py:\ndef f():\n    return 1\n"
    )
    touch(path, T0 + 5)
    second = (await client.post("/compact", json=request)).json()
    assert second["messages"][3]["content"] == (
        "[Restored after compact] src/app.py:\ndef f():\n    return 1\n\n"
        "Note: src/app.py was modified externally."
    )
    assert second["warnings"] == []
    without_session = (await client.post("/compact", json=request | {"session_id": None})).json()
    assert without_session["messages"][3]["content"] == first["messages"][3]["content"]


async def test_a_read_result_seen_by_compress_counts_for_the_next_restore(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    path = workdir / "b.py"
    path.write_text("b = 1\n")
    touch(path, T0)
    body = {"tool": "read_file", "input": {"path": "b.py"}, "result": "b = 1", "session_id": "s"}
    await client.post("/compress-tool-result", json=body)
    touch(path, T0 + 1)
    messages = [user("go"), *bulk_round(), *read_round("b.py", "b = 1"), assistant("ok")]
    data = (
        await client.post("/compact", json={"messages": messages, "force": True, "session_id": "s"})
    ).json()
    assert data["messages"][2]["content"] == (
        "[Restored after compact] b.py:\nb = 1\n\nNote: b.py was modified externally."
    )


async def test_a_failed_read_is_not_recorded_as_seen(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    path = workdir / "c.py"
    path.write_text("c = 1\n")
    touch(path, T0)
    body: dict[str, Any] = {
        "tool": "Read",
        "input": {"file_path": "c.py"},
        "result": "permission denied",
        "is_error": True,
        "session_id": "s",
    }
    failed = (await client.post("/compress-tool-result", json=body)).json()
    assert failed["result"] == {"status": "error", "error": {"message": "permission denied"}}
    touch(path, T0 + 1)
    body.update(result="c = 1", is_error=False)
    first = (await client.post("/compress-tool-result", json=body)).json()
    assert "note" not in first["result"]["data"]


async def test_preprocess_input_checks_at_most_a_thousand_mentions(
    client: httpx.AsyncClient,
) -> None:
    text = " ".join(f"@m{i}.py" for i in range(1001))
    data = (await client.post("/preprocess-input", json={"text": text})).json()
    assert len(data["mentions"]) == 1000
    assert len(data["missing"]) == 1000
    assert data["text"] == text
    assert data["warnings"] == ["only the first 1000 mentions were considered"]


async def test_assemble_warns_when_the_rules_file_cannot_be_injected(
    client_for: Callable[..., Any], workdir: Path
) -> None:
    client = await client_for(project_rules_max_bytes=4)
    (workdir / "Code_Law.md").write_text("far too long")
    data = (await client.post("/assemble", json={"system": "S", "input": "go"})).json()
    assert data["messages"] == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "go"},
    ]
    assert (data["rules_source"], data["rules_path"]) == ("none", None)
    assert data["warnings"] == ["project rules not read: Code_Law.md too_large"]


async def test_a_bare_shell_result_is_compressed_with_its_streams(
    client: httpx.AsyncClient,
) -> None:
    result = {"stdout": "line 1\nline 2", "stderr": "warning: slow", "exit_code": 0}
    body = {"tool": "Bash", "input": {"command": "make"}, "result": result}
    answer = (await client.post("/compress-tool-result", json=body)).json()
    assert answer["result"] == {
        "status": "success",
        "data": {
            "command": "make",
            "exit_code": 0,
            "stdout": {"lines": 2, "chars": 13, "head": "line 1\nline 2"},
            "stderr": {"lines": 1, "tail": "warning: slow"},
            "truncated": False,
        },
    }


async def test_a_field_beside_data_that_would_be_dropped_is_a_422(
    client: httpx.AsyncClient,
) -> None:
    result = {"status": "error", "data": {"stdout": "1 failed"}, "stderr": "E assert"}
    body = {"tool": "Bash", "result": result}
    response = await client.post("/compress-tool-result", json=body)
    assert response.status_code == 422
    assert response.json()["details"] == [
        {
            "field": "result",
            "message": "`stderr` beside `data` or `text` would be lost: put them inside `data`",
        }
    ]
