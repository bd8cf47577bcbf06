"""An agent loop that never waits for a summary: compaction runs as a
background job.

Each turn it asks `/should-compact`; at 70% of the window it starts a background job
(`POST /compactions`) and keeps working; once the job is `done` it swaps the compacted
prefix into its current list (`POST /compactions/{id}/apply`), keeping every message
appended meanwhile. `call_model` and `run_tool` stand in for your LLM client and tools.

    context-compact serve &                    # the service on 127.0.0.1:8080
    python examples/agent_loop_background.py   # applies at least one background compaction

The address and token come from `COMPACT_URL` and `COMPACT_API_TOKEN`, as for the server.
The stand-in model writes long replies into a small window (`CONTEXT_WINDOW`), so the demo
compacts within a few turns; use your model's window.

The job is started right before a model call, when the list ends with a user message or
tool results: never between a tool call and its result (apply would answer 409
invalid_seam, since the call is summarized away while its result is kept).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import httpx

SERVICE = os.environ.get("COMPACT_URL") or "http://127.0.0.1:8080"
TOKEN = os.environ.get("COMPACT_API_TOKEN")
CONTEXT_WINDOW = 4_000  # the demo's: small, so that a few long replies fill it
START_AT = 0.7  # start compacting in the background at 70% of the window
SESSION_ID = "example-session"

Message = dict[str, Any]


def call_model(messages: list[Message]) -> Message:
    """Your LLM call. This stand-in answers at length, as models working on code do."""
    work = f"Turn {len(messages)}: edited src/app.py and ran the tests. " * 24
    return {"role": "assistant", "content": work}


def next_user_message(turn: int) -> Message:
    return {"role": "user", "content": f"Step {turn}: keep going."}


class BackgroundCompactor:
    """Starts at most one job at a time and applies it as soon as it is done."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self.job_id: str | None = None
        self.applied = 0

    def maybe_start(self, messages: list[Message]) -> None:
        if self.job_id is not None:
            return
        decision = self.client.post(
            "/should-compact",
            json={"messages": messages, "context_window": CONTEXT_WINDOW},
        )
        decision.raise_for_status()  # 401: main says to set COMPACT_API_TOKEN
        if decision.json()["token_count"] < START_AT * CONTEXT_WINDOW:
            return
        response = self.client.post(
            "/compactions",
            json={"messages": messages, "session_id": SESSION_ID, "force": True},
        )
        if response.status_code == 202:
            self.job_id = response.json()["id"]
        # 409 session_busy or 503 queue_full: try again on a later turn.

    def maybe_apply(self, messages: list[Message]) -> list[Message]:
        if self.job_id is None:
            return messages
        job = self.client.get(f"/compactions/{self.job_id}").json()
        if job.get("state") in ("queued", "running"):
            return messages  # not yet: keep working with the full list
        job_id, self.job_id = self.job_id, None
        if job.get("state") != "done":
            return messages  # failed, cancelled or expired: a later turn starts another
        applied = self.client.post(f"/compactions/{job_id}/apply", json={"messages": messages})
        if applied.status_code != 200:  # 409: the list was edited since, or a bad seam
            return messages
        compacted: list[Message] = applied.json()["messages"]
        self.applied += 1
        return compacted


def run(client: httpx.Client, turns: int = 20, pause: float = 0.05) -> tuple[list[Message], int]:
    """The loop; `pause` stands in for the model's time, during which the job runs. The
    messages at the end, and how many compactions were applied."""
    messages: list[Message] = [{"role": "system", "content": "You are a coding agent."}]
    compactor = BackgroundCompactor(client)
    for turn in range(turns):
        messages.append(next_user_message(turn))
        messages = compactor.maybe_apply(messages)
        compactor.maybe_start(messages)  # right before the model call
        messages.append(call_model(messages))
        time.sleep(pause)
    return messages, compactor.applied


def refusal(exc: httpx.HTTPStatusError) -> str:
    """The service's answer in one line: its status, error code and message."""
    response = exc.response
    try:
        body = response.json()
    except ValueError:
        body = {}
    said = f"{body.get('error')}: {body.get('message')}" if isinstance(body, dict) else ""
    line = f"{response.status_code} {said or response.reason_phrase}"
    if response.status_code == 401:
        line += " (set COMPACT_API_TOKEN to the server's token)"
    return line


def main() -> int:
    """The demo: exits 1 unless a background compaction was applied; a refused call or a
    service that is not there is one line on stderr, not a traceback."""
    headers = {"Authorization": f"Bearer {TOKEN}"} if TOKEN else {}
    try:
        with httpx.Client(base_url=SERVICE, headers=headers, timeout=30) as client:
            messages, applied = run(client)
    except httpx.HTTPStatusError as exc:
        print(f"error: {refusal(exc)}", file=sys.stderr)
        return 1
    except httpx.TransportError:
        where = f"no service at {SERVICE} (start `context-compact serve`, or set COMPACT_URL)"
        print(f"error: {where}", file=sys.stderr)
        return 1
    print(f"applied {applied} background compaction(s); {len(messages)} messages at the end")
    return 0 if applied else 1


if __name__ == "__main__":
    sys.exit(main())
