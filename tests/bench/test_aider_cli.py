"""The pure parts of `bench.aider_cli`: the turns fed to aider, the fake model that rewrites
the file whole for the turn asked, the check that a request's files message holds the file
as the previous turn left it, the proxy's session ids in order, and the relay's errors."""

from __future__ import annotations

from typing import Any

import orjson

from bench import aider_cli
from bench.aider_cli import (
    FILES_PREFIX,
    STEP,
    latest_files,
    rewrite,
    session_runs,
    sessions,
    step,
    turns,
    version,
)
from bench.cli_relay import is_error
from tests.fakes.provider import Received, Text
from tests.proxy import agents


def _request(k: int, files_version: int, history: int = 0) -> dict[str, Any]:
    """One of aider's requests for turn `k`, its files message holding `files_version`."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Act as an expert."}]
    for i in range(1, history + 1):
        messages.append({"role": "user", "content": f"Step {i}: rewrite app.py for step {i}."})
        messages.append({"role": "assistant", "content": f"app.py\n```python\n{version(i)}```"})
    files = agents.aider_files({"app.py": version(files_version)})
    messages.append({"role": "user", "content": files})
    messages.append({"role": "assistant", "content": agents.FILES_REPLY})
    messages.append({"role": "user", "content": f"Step {k}: rewrite app.py for step {k}."})
    return {"model": "gpt-compact-bench", "messages": messages}


def test_the_files_prefix_is_aiders_own() -> None:
    assert agents.FILES_PREFIX.startswith(FILES_PREFIX)


def test_each_turn_is_one_line_of_input_naming_its_step() -> None:
    lines = turns(3).splitlines()
    assert [int(STEP.search(line).group(1)) for line in lines] == [1, 2, 3]  # type: ignore[union-attr]
    assert len(turns().splitlines()) == aider_cli.TURNS


def test_the_fake_model_rewrites_the_file_whole_for_the_turn_asked() -> None:
    body = _request(4, 3, history=3)
    assert step(body) == 4
    (reply,) = rewrite(Received("POST", "/v1/chat/completions", "", (), b"", body, 0.0)).blocks
    assert reply == Text(f"app.py\n```python\n{version(4)}```\n")
    assert version(4) != version(3)
    summary = {"messages": [{"role": "user", "content": "Briefly summarize the chat."}]}
    assert step(summary) is None
    (text,) = rewrite(Received("POST", "/v1/chat/completions", "", (), b"", summary, 0.0)).blocks
    assert "```" not in text.text


def test_the_files_message_must_hold_the_file_as_the_latest_answer_left_it() -> None:
    ok = [(_request(1, 0), 200), (_request(2, 1, 1), 200), (_request(3, 2, 2), 200)]
    assert latest_files(ok) == [True, True, True]
    # A stale files message fails, even when the history holds the latest version.
    stale = [(_request(1, 0), 200), (_request(2, 1, 1), 200), (_request(3, 1, 2), 200)]
    assert latest_files(stale) == [True, True, False]
    # A refused turn wrote nothing: the next request must still hold the version before.
    refused = [(_request(1, 0), 200), (_request(2, 1, 1), 400), (_request(3, 1, 1), 200)]
    assert latest_files(refused) == [True, True, True]
    summarized = _request(2, 1)
    summarized["messages"] = [m for m in summarized["messages"]
                              if not str(m["content"]).startswith(FILES_PREFIX)]  # fmt: skip
    assert latest_files([(_request(1, 0), 200), (summarized, 200)]) == [True, False]
    assert latest_files([({"messages": [{"role": "user", "content": "hi"}]}, 200)]) == [None]


def test_sessions_are_the_distinct_ids_in_the_order_they_came() -> None:
    answered = [{"session": "a"}, {}, {"session": "a"}, {"session": "b"}, {"session": "a"}]
    assert sessions(answered) == ["a", "b"]
    assert sessions([{}, {"action": "none"}]) == []
    assert session_runs(answered) == "#1 x2, #2 x1, #1 x1"  # an answer naming none: skipped
    assert session_runs([{"session": "a"}, {"session": "b"}, {"session": "b"}]) == "#1 x1, #2 x2"
    assert session_runs([{}]) == ""


def test_the_relay_reads_an_error_in_the_status_or_inside_a_stream() -> None:
    assert is_error(400, b'{"error": {"code": "context_length_exceeded"}}')
    assert is_error(200, b'data: {"id": "1"}\n\ndata: {"error": {"message": "x"}}\n\n')
    assert is_error(200, b'event: error\ndata: {"type": "error"}\n\n')
    assert not is_error(200, b'data: {"choices": [{"delta": {"content": "an error"}}]}\n\n')
    assert not is_error(200, orjson.dumps({"type": "message", "content": []}))
