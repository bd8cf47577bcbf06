"""The OpenAI Agents SDK (`openai-agents`, the Responses API) through the proxy, against the
tests' fake provider with a small window: `python -m bench.agents_sdk`, with the SDK
importable (it is not a dependency of the project: `pip install --target DIR
openai-agents` and its missing dependencies, then `PYTHONPATH=DIR`).

An agent with one function tool reads parts of a long file one by one (the fake model asks
for each in turn), more than the window holds. Set up as docs/proxy.md says
(`set_default_openai_client(AsyncOpenAI(base_url=<proxy>/v1))`), run directly and
through the proxy; printed per run: the requests, the provider's context-length refusals,
the proxy's actions (its `/metrics`), and how the run ended.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
from agents import Agent, Runner, function_tool, set_default_openai_client, set_tracing_disabled

from tests.fakes.provider import FakeProvider, Limits, Received, Text, ToolCall, answer
from tests.proxy.live import serve_proxy

MODEL = "gpt-compact-bench"
WINDOW = 24_000
PARTS = 24


@function_tool
def read_part(n: int) -> str:
    """Part `n` of the file being reviewed."""
    return "\n".join(
        f"part {n:02d} line {i:03d}: value = {n * 1000 + i} # checked" for i in range(200)
    )


def _next_read(received: Received) -> Any:
    """The fake model: the part after the latest one read, then `Done.`."""
    body = received.json if isinstance(received.json, dict) else {}
    read = -1
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call":
            read = int(orjson.loads(item.get("arguments") or "{}").get("n", read))
    if read + 1 >= PARTS:
        return answer(Text("Done."))
    return answer(ToolCall("read_part", {"n": read + 1}))


def run(root: Path, through_proxy: bool) -> dict[str, Any]:
    with (
        FakeProvider(Limits(windows={MODEL: WINDOW})) as provider,
        serve_proxy(
            provider.url, root, models={MODEL: {"context_window": WINDOW, "tokenizer": "o200k"}}
        ) as live,
    ):
        provider.respond_with(_next_read)
        base = (live.proxy if through_proxy else provider.url) + "/v1"
        set_default_openai_client(openai.AsyncOpenAI(base_url=base, api_key="sk-agents"))
        agent = Agent(name="reviewer", instructions="Review the file.", tools=[read_part])
        agent.model = MODEL
        try:
            result = Runner.run_sync(agent, f"Read parts 0 to {PARTS - 1}.", max_turns=PARTS + 5)
            ended = str(result.final_output)
        except openai.BadRequestError as refused:
            ended = f"BadRequestError: {refused.message[:80]}"
        text = httpx.get(f"{live.api}/metrics").text if through_proxy else ""
        found = re.findall(r'context_compact_proxy_requests_total\{action="(\w+)"\} (\d+)', text)
        return {
            "run": "proxy" if through_proxy else "direct",
            "requests": len(provider.exchanges),
            "paths": sorted({e.received.path for e in provider.exchanges}),
            "refused_for_length": sum(
                b"context_length_exceeded" in b"".join(e.sent.chunks) for e in provider.exchanges
            ),
            "other_errors": sum(
                e.sent.status != 200 and b"context_length_exceeded" not in b"".join(e.sent.chunks)
                for e in provider.exchanges
            ),
            "actions": {action: int(float(n)) for action, n in found},
            "ended": ended,
        }


def main() -> None:
    set_tracing_disabled(True)
    for through_proxy in (False, True):
        with tempfile.TemporaryDirectory(prefix="agents-bench-") as scratch:
            print(orjson.dumps(run(Path(scratch), through_proxy)).decode(), flush=True)


if __name__ == "__main__":
    main()
