"""An agent loop that asks before every model call whether to compact, and compacts when
told, with the typed client package `context_compact_client` (clients/python).

Before each call it sends `/should-compact` the provider's `usage` of the last response
plus the input about to be sent (no tokenizing: the provider already counted). When the answer is
`should_compact`, it compacts the history with `/compact` *before* appending the new
input, so the new request is never summarized away, and continues from the compacted
list. `call_model` stands in for your LLM client.

It also gives the model the `recall` tool (`examples/recall_tool.json`: add its
`anthropic` or `openai` entry to your call's tools, and send them to `/compact` too). After
a compaction the summary says that earlier details can be recalled; when the model calls
`recall`, the loop answers from the session's archives (`POST /sessions/{session_id}/recall`)
and calls the model again.

    context-compact serve &               # the service on 127.0.0.1:8080 (README: first command)
    python examples/agent_loop.py         # compacts twice and recalls once, then says so

Run as a script, a stand-in model (`demo_model`) writes long replies into a small window
(`DEMO_WINDOW`), so the loop compacts every few turns, and asks `recall` once after each
compaction. The address and token come from `COMPACT_URL` and `COMPACT_API_TOKEN`, as
for the server. From a checkout the client is found in `clients/python` when it is not
installed (`pip install ./clients/python` installs it: it depends on httpx only).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import context_compact_client  # noqa: F401
except ModuleNotFoundError:  # a checkout without the client installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clients" / "python"))

from context_compact_client import ContextCompactClient, ContextCompactError
from context_compact_client.types import RecallResponse

CONTEXT_WINDOW = 200_000
# The demo's window: small, so that a few long replies fill it.
DEMO_WINDOW = 4_000
DEMO_TURNS = 24
SESSION_ID = "example-session"
# The tool definition to add to the model call's `tools` (Anthropic shape; "openai" for
# the Chat Completions one).
RECALL_TOOL: dict[str, Any] = json.loads(
    Path(__file__).with_name("recall_tool.json").read_text(encoding="utf-8")
)["anthropic"]
MAX_RECALLS_PER_TURN = 3

Message = dict[str, Any]
Usage = Mapping[str, int]
# Your model: the messages in, its reply and the provider's usage block out.
CallModel = Callable[[Sequence[Message]], tuple[Message, Usage]]


@dataclass
class Session:
    messages: list[Message]
    compacted_at: list[int] = field(default_factory=list)  # turns that compacted first
    recalled: list[str] = field(default_factory=list)  # the queries answered from archives


def stand_in_model(messages: Sequence[Message]) -> tuple[Message, Usage]:
    """Replace with your LLM call. Reports ~4 characters a token as its usage."""
    reply = {"role": "assistant", "content": f"(reply to {len(messages)} messages)"}
    return reply, {"input_tokens": _size(messages) // 4, "output_tokens": 10}


def demo_model(messages: Sequence[Message]) -> tuple[Message, Usage]:
    """The demo's stand-in: a long reply each turn (a history of short ones would not get
    smaller by compacting); after each compaction, it asks `recall` once for what the
    first step said."""
    compacted = str(messages[1].get("content", "")).startswith("[Conversation compressed]")
    asked = any(isinstance(m.get("content"), list) for m in messages)
    usage = {"input_tokens": _size(messages) // 4, "output_tokens": 300}
    if compacted and not asked:
        call = {
            "type": "tool_use",
            "id": "recall-1",
            "name": "recall",
            "input": {"query": "Step 1"},
        }
        return {"role": "assistant", "content": [call]}, usage
    step = sum(1 for m in messages if m["role"] == "user")
    work = f"Step {step} done: edited src/app.py and ran the tests. " * 24
    return {"role": "assistant", "content": work}, usage


def _size(messages: Sequence[Message]) -> int:
    return sum(len(str(m.get("content", ""))) for m in messages)


def next_input(turn: int) -> str:
    return f"Step {turn}: keep going."


def run(
    client: ContextCompactClient,
    call_model: CallModel = stand_in_model,
    *,
    turns: int = 20,
    context_window: int = CONTEXT_WINDOW,
) -> Session:
    session = Session(messages=[{"role": "system", "content": "You are a coding agent."}])
    usage: Usage | None = None
    for turn in range(turns):
        text = next_input(turn)
        decision = client.should_compact(
            session.messages, last_usage=usage, pending_input=text, context_window=context_window
        )
        if decision["should_compact"]:
            # The model's tools go along: with `recall` among them, the summary says how to
            # look up what the archive holds (without it, a summary never names the tool).
            result = client.compact(
                session.messages, session_id=SESSION_ID, force=True, tools=[RECALL_TOOL]
            )
            if result["compacted"]:  # else (e.g. archive_failed) go on with the full list
                session.messages = result["messages"]
                session.compacted_at.append(turn)
                usage = None  # the last usage measured the old list: count the new one
        session.messages.append({"role": "user", "content": text})
        reply, usage = call_model(session.messages)
        session.messages.append(reply)
        for _ in range(MAX_RECALLS_PER_TURN):
            calls = recall_calls(reply)
            if not calls:
                break
            session.recalled += [str((c.get("input") or {}).get("query", "")) for c in calls]
            session.messages.append(answer_recalls(client, calls))
            reply, usage = call_model(session.messages)
            session.messages.append(reply)
    return session


def recall_calls(reply: Message) -> list[dict[str, Any]]:
    """The model's calls of the `recall` tool in its reply (Anthropic shape)."""
    content = reply.get("content")
    if not isinstance(content, list):
        return []
    return [
        block
        for block in content
        if block.get("type") == "tool_use" and block.get("name") == RECALL_TOOL["name"]
    ]


def answer_recalls(client: ContextCompactClient, calls: Sequence[dict[str, Any]]) -> Message:
    """One tool result per call, from the session's archives."""
    results = []
    for call in calls:
        arguments = call.get("input") or {}
        try:
            found = client.recall(
                SESSION_ID, str(arguments.get("query", "")), arguments.get("limit")
            )
        except ContextCompactError as exc:
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call["id"],
                    "content": str(exc),
                    "is_error": True,
                }
            )
            continue
        results.append({"type": "tool_result", "tool_use_id": call["id"], "content": render(found)})
    return {"role": "user", "content": results}


def render(found: RecallResponse) -> str:
    """The hits as the model reads them: where each came from, then its snippet."""
    if not found["hits"]:
        return "No archived message matches."
    return "\n\n".join(
        f"[archive {hit['archive_id']}, message {hit['message_index']}, {hit['role']}"
        f"{', tool ' + hit['tool_name'] if hit.get('tool_name') else ''}]\n{hit['snippet']}"
        for hit in found["hits"]
    )


def main() -> int:
    """The demo: exits 1 unless it compacted at least twice and recalled at least once."""
    with ContextCompactClient() as service:  # COMPACT_URL, COMPACT_API_TOKEN
        try:
            done = run(service, demo_model, turns=DEMO_TURNS, context_window=DEMO_WINDOW)
        except ContextCompactError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    print(f"compacted before turns {done.compacted_at}")
    print(f"recalled {done.recalled}")
    print(f"{len(done.messages)} messages at the end")
    return 0 if len(done.compacted_at) >= 2 and done.recalled else 1


if __name__ == "__main__":
    sys.exit(main())
