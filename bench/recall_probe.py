"""Recall of every archived fact: `python -m bench.recall_probe FILE STRATEGY WINDOW`.

The replay's *missing found by recall* asks recall only for the facts a compaction left
out, and those are few (sometimes none), so a weak ranking can go unseen. Here one
conversation file (`<name>.<shape>.json` of a built corpus) is replayed as the replay
does, then every ground-truth fact (`bench/replay_facts.py`) that an archived message
holds is recalled with the fact as the query (limit 10, as the replay asks): the misses
are those whose holder is not among the hits. Prints each miss and the count.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.adapters.tokenizer import TiktokenTokenizer
from bench.replay import in_process
from bench.replay_driver import Conversation, ServiceClient, _Loop, context_text
from bench.replay_facts import KINDS, extract


class RecordingClient(ServiceClient):
    """The replay's client, remembering the archive of every compaction."""

    def __init__(self, inner: ServiceClient) -> None:
        super().__init__(inner.client)
        self.archive_ids: list[str] = []

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, data = await super().post(path, body)
        archive = data.get("archive")
        if path == "/compact" and isinstance(archive, dict):
            self.archive_ids.append(str(archive["id"]))
        return status, data


async def probe(
    service: ServiceClient, conversation: Conversation, strategy: str, window: int
) -> tuple[int, list[tuple[str, str]]]:
    """How many archived facts were recalled, and the (kind, fact) recall missed."""
    client = RecordingClient(service)
    loop = _Loop(client, conversation, strategy, window, TiktokenTokenizer().count, False)
    await loop.run()
    archived: list[str] = []
    for archive_id in client.archive_ids:
        messages = (await client.archive(archive_id)).get("messages") or []
        archived += [context_text([m]) for m in messages]
    truth = extract(conversation.messages)
    probed, misses = 0, []
    for kind in KINDS:
        for fact in truth.by_kind[kind]:
            if not any(fact in text for text in archived):
                continue
            probed += 1
            if not await loop.recalled(fact):
                misses.append((kind, fact))
    return probed, misses


async def run(
    conversation: Conversation, strategy: str, window: int
) -> tuple[int, list[tuple[str, str]]]:
    async with in_process(TiktokenTokenizer()) as service:
        return await probe(service, conversation, strategy, window)


def probe_arguments(
    prog: str, doc: str | None, argv: Sequence[str] | None
) -> tuple[Conversation, str, int]:
    """A probe's `FILE STRATEGY WINDOW`: the conversation of the file (`<name>.<shape>.json`
    of a built corpus), the strategy and the window."""
    parser = argparse.ArgumentParser(prog=f"python -m {prog}", description=doc)
    parser.add_argument("file", type=Path)
    parser.add_argument("strategy")
    parser.add_argument("window", type=int)
    args = parser.parse_args(argv)
    data = json.loads(args.file.read_text(encoding="utf-8"))
    name = args.file.name.rsplit(".", 2)[0]
    return Conversation(name, data["format"], data["messages"]), args.strategy, args.window


def main(argv: Sequence[str] | None = None) -> int:
    conversation, strategy, window = probe_arguments("bench.recall_probe", __doc__, argv)
    probed, misses = asyncio.run(run(conversation, strategy, window))
    for kind, fact in misses:
        print(f"missed {kind}: {fact}")
    print(f"{probed} archived facts recalled, {len(misses)} missed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
