"""The proxy's memory per session: `N` sessions of a 200k-token model, each compacted once
(a request over the limit, compacted at once) and then carrying its head on the next
request, measured with tracemalloc as what is freed when the compactor forgets them.
`--running`: each then grown past the start mark, its background compaction (by a
summarizer that never answers) and standby still running when measured.

    python -m bench.proxy_memory [N] [--running] [-v]
"""

from __future__ import annotations

import asyncio
import gc
import sys
import tracemalloc
from typing import Any

import orjson

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.model_table import ModelSpec
from app.core.summary import ExtractiveSummarizer
from app.proxy.compactor import ProxyCompactor
from app.proxy.exchange import Exchange
from tests.builders import MemoryArchive, assistant, build_service, tool_result, tool_use, user

SPEC = ModelSpec(context_window=200_000, tokenizer="tiktoken", margin=0.0)
LIMIT = 190_000


class Discarding(MemoryArchive):
    """Archives written nowhere: only the proxy's own memory is measured."""

    def save(self, archive: Any) -> None:
        return None


def history(session: int, rounds: int) -> list[dict[str, Any]]:
    """A session of its own (no text shared with another's): a task, then `rounds` tool
    calls, each reading about 2,000 tokens of distinct output."""
    out = [user(f"Session {session}: fix the build of the parser.")]
    for i in range(rounds):
        lines = "".join(
            f"s{session} r{i} line {j}: value {session * 7919 + i * 31 + j}\n" for j in range(160)
        )
        out += [
            assistant(f"Reading {i}.", tool_use("bash", f"t{i}", command=f"cat part{i}.log")),
            tool_result(f"t{i}", lines),
            assistant(f"Read {i}."),
            user(f"Go on with part {i + 1}."),
        ]
    return out


def exchange(session: int, messages: list[dict[str, Any]]) -> Exchange:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 8000, "messages": messages}
    return Exchange("anthropic", f"s{session}", body, SPEC, LIMIT, len(orjson.dumps(body)))


class Never:
    """A configured summarizer that never answers: its compactions keep running."""

    name = "never"
    reads_prompt = False

    async def summarize(self, request: Any) -> str:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        return None


async def main(count: int, running: bool) -> None:
    tokenizer = TiktokenTokenizer()
    service = build_service(tokenizer, ExtractiveSummarizer(), archive=Discarding())
    background = build_service(tokenizer, Never(), archive=Discarding()) if running else service
    compactor = ProxyCompactor(background, service)
    tracemalloc.start()
    for session in range(count):
        client = history(session, 100)  # past the limit: compacted at once
        first = await compactor.plan(exchange(session, client))
        later = [*client, assistant("Next."), user("And the docs.")]
        second = await compactor.plan(exchange(session, later))
        assert (first.action, second.action) == ("compacted", "applied"), (first, second)
        if running:
            await compactor.plan(exchange(session, history(session, 135)))
            assert compactor._sessions[f"s{session}"].running is not None
        else:
            tasks = [t for s in compactor._sessions.values() for t in (s.running, s.spare) if t]
            if tasks:
                await asyncio.wait(tasks)
    await asyncio.sleep(0)
    gc.collect()
    held = tracemalloc.take_snapshot()
    sessions = len(compactor._sessions)
    tasks = [t for s in compactor._sessions.values() for t in (s.running, s.spare) if t]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks)
    del tasks  # a finished task keeps its coroutine, and the request it began from
    compactor._sessions.clear()
    compactor.shared.store = type(compactor.shared.store)()  # the memory store's copies too
    gc.collect()
    freed = tracemalloc.take_snapshot()
    tracemalloc.stop()
    stats = held.compare_to(freed, "lineno")
    per = sum(s.size_diff for s in stats) / sessions
    if "-v" in sys.argv:
        for stat in stats[:8]:
            print(stat)
    state = "a compaction running" if running else "each compacted once"
    print(f"{sessions} sessions, {state}: {per / 1024:.0f} KiB per session")


if __name__ == "__main__":
    count = next((int(a) for a in sys.argv[1:] if a.isdigit()), 10)
    asyncio.run(main(count, "--running" in sys.argv))
