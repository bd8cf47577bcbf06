"""An agent loop that asks before every model call whether to compact, and compacts when
told, with the typed client package `context_compact_client` (clients/python).

Before each call it sends `/should-compact` the provider's `usage` of the last response
plus the input about to be sent (no tokenizing: the provider already counted). When the answer is
`should_compact`, it compacts the history with `/compact` *before* appending the new
input, so the new request is never summarized away, and continues from the compacted
list. `call_model` stands in for your LLM client.

    pip install ./clients/python          # the client; depends on httpx only
    python -m app serve &                 # the service on 127.0.0.1:8080
    python examples/agent_loop.py
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from context_compact_client import ContextCompactClient

SERVICE = "http://127.0.0.1:8080"
CONTEXT_WINDOW = 200_000
SESSION_ID = "example-session"

Message = dict[str, Any]
Usage = Mapping[str, int]
# Your model: the messages in, its reply and the provider's usage block out.
CallModel = Callable[[Sequence[Message]], tuple[Message, Usage]]


@dataclass
class Session:
    messages: list[Message]
    compacted_at: list[int] = field(default_factory=list)  # turns that compacted first


def stand_in_model(messages: Sequence[Message]) -> tuple[Message, Usage]:
    """Replace with your LLM call. Reports ~4 characters a token as its usage."""
    size = sum(len(str(m.get("content", ""))) for m in messages)
    reply = {"role": "assistant", "content": f"(reply to {len(messages)} messages)"}
    return reply, {"input_tokens": size // 4, "output_tokens": 10}


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
            result = client.compact(session.messages, session_id=SESSION_ID, force=True)
            if result["compacted"]:  # else (e.g. archive_failed) go on with the full list
                session.messages = result["messages"]
                session.compacted_at.append(turn)
                usage = None  # the last usage measured the old list: count the new one
        session.messages.append({"role": "user", "content": text})
        reply, usage = call_model(session.messages)
        session.messages.append(reply)
    return session


if __name__ == "__main__":
    with ContextCompactClient(SERVICE) as service:
        done = run(service)
    print(f"{len(done.messages)} messages at the end; compacted before turns {done.compacted_at}")
