from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.assemble import SUMMARY_ACK
from app.core.sessions.ids import archive_sha256
from tests.builders import assistant, bulk_round, read_round, system, user
from tests.corpus import ANTHROPIC_FILES

pytestmark = pytest.mark.anyio

CONVERSATION = [
    system("You are a coding agent."),
    user("Fix the bug in src/app.py."),
    *bulk_round(),
    *read_round("src/app.py", "def f(:"),
    *read_round("README.md", "# readme"),
    assistant("Fixed it."),
]


async def test_below_threshold_returns_the_messages_exactly_as_sent(
    client: httpx.AsyncClient,
) -> None:
    messages = [*CONVERSATION, {"role": "user", "content": "next", "id": "u9", "x-extra": [1]}]
    response = await client.post("/compact", json={"messages": messages})
    data = response.json()
    assert response.status_code == 200
    assert (data["compacted"], data["reason"]) == (False, "below_threshold")
    assert data["messages"] == messages
    assert (data["stats"], data["summary"], data["archive"]) == (None, None, None)


async def test_forced_compaction_restores_files_and_archives_the_rest(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    (workdir / "src").mkdir()
    (workdir / "src" / "app.py").write_text("def f():\n    return 1\n")
    request = {"messages": CONVERSATION, "force": True, "session_id": "s-1"}
    sent = copy.deepcopy(request)
    data = (await client.post("/compact", json=request)).json()
    assert request == sent
    assert data["compacted"] is True
    assert data["reason"] is None
    assert data["summarizer"] == "extractive"
    messages = data["messages"]
    assert messages[0] == CONVERSATION[0]
    assert messages[1]["role"] == "user"
    assert messages[1]["content"].startswith(
        "[Conversation compressed]\n\nWritten by the compaction"
    )
    assert "the user's.\n\n## Goals & Decisions" in messages[1]["content"]
    assert messages[2] == {"role": "assistant", "content": SUMMARY_ACK}
    assert messages[3:] == [
        {
            "role": "user",
            "content": "[Restored after compact] src/app.py:\ndef f():\n    return 1\n",
        },
        {"role": "assistant", "content": "Noted, file content restored."},
    ]
    assert [f["path"] for f in data["restored_files"]] == ["src/app.py"]
    assert data["skipped_files"] == [{"path": "README.md", "reason": "not_found"}]
    stats = data["stats"]
    assert stats["compacted_message_count"] == 8
    assert stats["retained_message_count"] == 1
    assert stats["restored_file_count"] == 1
    assert data["token_count"] == stats["original_token_count"]

    archive = data["archive"]
    assert archive["session_id"] == "s-1"
    assert archive["message_count"] == 8
    fetched = await client.get(f"/archives/{archive['id']}")
    assert fetched.status_code == 200
    stored = fetched.json()
    assert stored["messages"] == CONVERSATION[1:]
    assert stored["sha256"] == archive["sha256"] == archive_sha256(CONVERSATION[1:])
    assert stored["session_id"] == "s-1"


async def test_archive_failure_compacts_nothing(client_for: Any, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    client = await client_for(data_dir=str(blocker))
    data = (await client.post("/compact", json={"messages": CONVERSATION, "force": True})).json()
    assert (data["compacted"], data["reason"]) == (False, "archive_failed")
    assert data["messages"] == CONVERSATION
    assert data["warnings"][0].startswith("archive failed: ")


async def test_options_and_instructions_shape_the_compaction(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    (workdir / "src").mkdir()
    (workdir / "src" / "app.py").write_text("x")
    (workdir / "README.md").write_text("y")
    body = {
        "messages": CONVERSATION,
        "force": True,
        "instructions": "the parser bug",
        "options": {"max_restore_files": 1},
    }
    data = (await client.post("/compact", json=body)).json()
    assert [f["path"] for f in data["restored_files"]] == ["README.md"]
    assert "Focus requested: the parser bug" in data["summary"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"session_id": "../etc"}, "session_id"),
        ({"session_id": "a/b"}, "session_id"),
        ({"options": {"threshold": 1.5}}, "options.threshold"),
        ({"options": {"strategy": "magic"}}, "options.strategy"),
        ({"options": {"read_tools": ["nodot"]}}, "options"),
        ({"force": "maybe"}, "force"),
    ],
)
async def test_bad_compact_requests_name_the_field(
    client: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    response = await client.post("/compact", json={"messages": CONVERSATION, **body})
    assert response.status_code == 422
    assert response.json()["details"][0]["field"] == field


async def test_archive_ids_cannot_become_paths(client: httpx.AsyncClient) -> None:
    for bad in ("a..b", ".hidden", "-x", "x" * 129):
        response = await client.get(f"/archives/{bad}")
        assert response.status_code == 422, bad
        assert response.json()["details"][0]["field"] == "archive_id"
    traversal = await client.get("/archives/..%2F..%2Fetc%2Fpasswd")
    assert traversal.status_code in (404, 422)


async def test_unknown_archive_is_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/archives/00000000000000000001-abc")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


async def test_health_and_readiness(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "ready": True,
        "checks": {
            "tokenizer_loaded": True,
            "data_dir_writable": True,
            "data_dir_has_room": True,
            "workdir_readable": True,
        },
        "summarizer": "extractive",
        "summary_fallback": "none",
    }


async def test_readiness_fails_when_the_work_dir_is_missing(
    client_for: Any, tmp_path: Path
) -> None:
    client = await client_for(workdir=str(tmp_path / "missing"))
    ready = await client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["workdir_readable"] is False


@pytest.mark.parametrize(
    "path", ANTHROPIC_FILES, ids=lambda p: p.name.removesuffix(".anthropic.json")
)
async def test_every_corpus_transcript_compacts(client: httpx.AsyncClient, path: Path) -> None:
    messages = json.loads(path.read_bytes())["messages"]  # noqa: ASYNC240 (tiny file)
    data = (await client.post("/compact", json={"messages": messages, "force": True})).json()
    assert data["compacted"] is True
    assert data["stats"]["compacted_token_count"] < data["stats"]["original_token_count"]
    assert data["messages"][0] == messages[0]
    roles = [m["role"] for m in data["messages"][1:]]
    # pairs, and the user's new request when the transcript ends with one ("Please
    # continue." sent beside the last tool results)
    assert roles == [["user", "assistant"][i % 2] for i in range(len(roles))]
    archived = (await client.get(f"/archives/{data['archive']['id']}")).json()
    assert archived["messages"] == messages[1:]


async def test_read_tool_preset_is_selectable_per_request(
    client: httpx.AsyncClient, workdir: Path
) -> None:
    (workdir / "a.py").write_text("A = 1\n")
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}
    messages = [
        user("go"),
        *bulk_round(),
        assistant(call),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A"}]},
        assistant("done"),
    ]
    body = {"messages": messages, "force": True, "options": {"read_tools": ["claude_code"]}}
    data = (await client.post("/compact", json=body)).json()
    assert [f["path"] for f in data["restored_files"]] == ["a.py"]
    default = (await client.post("/compact", json={"messages": messages, "force": True})).json()
    assert default["restored_files"] == []


async def test_read_tool_preset_is_selectable_as_the_server_default(
    client_for: Any, workdir: Path
) -> None:
    (workdir / "a.py").write_text("A = 1\n")
    client = await client_for(read_tools="swe_agent")
    call = {
        "type": "tool_use",
        "id": "t1",
        "name": "str_replace_editor",
        "input": {"command": "view", "path": "a.py"},
    }
    messages = [
        user("go"),
        *bulk_round(),
        assistant(call),
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A"}]},
    ]
    data = (await client.post("/compact", json={"messages": messages, "force": True})).json()
    assert [f["path"] for f in data["restored_files"]] == ["a.py"]


BROKEN = [
    [{"role": "user", "content": "Fix a.py."}, {"role": "user", "content": "Now b.py."}],
    [
        {"role": "user", "content": "Fix a.py."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}],
        },
        {"role": "user", "content": "Go on."},
        {"role": "assistant", "content": "Done."},
    ],
    [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Fix a.py."},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        {"role": "assistant", "content": "Done."},
    ],
]


@pytest.mark.parametrize("messages", BROKEN)
async def test_force_never_changes_what_is_refused(
    client: httpx.AsyncClient, messages: list[dict[str, Any]]
) -> None:
    """A list that comes back as sent must be valid whether or not compaction was forced."""
    answers = [
        await client.post("/compact", json={"messages": messages, "force": force})
        for force in (False, True)
    ]
    assert [a.status_code for a in answers] == [422, 422]
    assert answers[0].json()["error"] == "invalid_conversation"
    assert answers[1].json() == answers[0].json()
