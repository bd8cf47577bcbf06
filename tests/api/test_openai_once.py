"""An OpenAI request is read once and each of its messages is converted back to the OpenAI
shape at most once: the input check, the archive, a job's hashes and an unchanged answer
use the items as sent, and only what a strategy builds (the summary, a restored file, a
cleared tool result) is converted, once, however many steps read it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.api.dialect import compact_request
from app.api.schemas import CompactRequestBody
from app.core.messages import Message
from app.core.provider import dialects, formats
from app.core.provider.dialects import OpenAIForms, from_openai
from app.core.result import result_json
from app.core.summary.extractive import ExtractiveSummarizer
from tests.builders import DictWorkdir, MemoryArchive, build_service

pytestmark = pytest.mark.anyio

OUTPUT = "line of tool output\n" * 60
SOURCE = "def f():\n    return 1\n"


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


SENT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": "Fix src/a.py.", "name": "ann"},
    {
        "role": "assistant",
        "content": "Reading it.",
        "tool_calls": [call("r1", "read_file", '{"path": "src/a.py"}')],
    },
    {"role": "tool", "tool_call_id": "r1", "content": SOURCE},
    *[
        item
        for n in (1, 2, 3)
        for item in (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call(f"c{n}", "bash", f'{{"command": "make {n}"}}')],
            },
            {"role": "tool", "tool_call_id": f"c{n}", "content": OUTPUT},
        )
    ],
    {"role": "user", "content": [{"type": "text", "text": "Please continue."}]},
    {"role": "assistant", "content": "Built."},
]

CANONICAL = len(from_openai(SENT))  # a tool run and the user text after it are one

OPTIONS: dict[str, dict[str, Any]] = {
    "full": {},
    "tail": {"tail_keep_recent_rounds": 1},
    "prune": {"prune_keep_recent": 1},
    "selective": {"selective_keep_recent": 1},
}


@dataclass
class Seen:
    """The canonical messages read from requests, each conversion to the OpenAI shape (the
    message and what it gave), and each validation of a request's OpenAI messages."""

    read: list[Message] = field(default_factory=list)
    converted: list[tuple[Message, list[dict[str, Any]]]] = field(default_factory=list)
    validated: list[int] = field(default_factory=list)
    built: int = 0

    def converted_ids(self) -> list[int]:
        return [id(m) for m, _ in self.converted]

    def produced(self) -> list[dict[str, Any]]:
        return [item for _, items in self.converted for item in items]


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    seen = Seen()
    convert = dialects.message_to_openai

    def counted_convert(message: Message) -> list[dict[str, Any]]:
        items = convert(message)
        seen.converted.append((message, items))
        return items

    read = OpenAIForms.read

    def recorded_read(self: OpenAIForms, raw: Any, dialect: Any = None) -> list[Message]:
        messages = read(self, raw, dialect)
        seen.read.extend(messages)
        return messages

    adapter = formats._OPENAI

    class CountedAdapter:
        def validate_python(self, raw: Any) -> Any:
            seen.validated.append(len(raw))
            return adapter.validate_python(raw)

    validate = Message.model_validate.__func__  # type: ignore[attr-defined]

    def counted_validate(cls: type[Message], data: Any, **kwargs: Any) -> Message:
        seen.built += 1
        message: Message = validate(cls, data, **kwargs)
        return message

    monkeypatch.setattr(dialects, "message_to_openai", counted_convert)
    monkeypatch.setattr(OpenAIForms, "read", recorded_read)
    monkeypatch.setattr(formats, "_OPENAI", CountedAdapter())
    monkeypatch.setattr(Message, "model_validate", classmethod(counted_validate))
    return seen


@pytest.fixture
def workdir_file(workdir: Path) -> None:
    (workdir / "src").mkdir()
    (workdir / "src" / "a.py").write_text(SOURCE)


async def test_an_unchanged_answer_is_the_sent_messages_without_conversion(
    client: httpx.AsyncClient, seen: Seen
) -> None:
    data = (await client.post("/compact", json={"messages": SENT})).json()
    assert (data["compacted"], data["reason"], data["format"]) == (
        False,
        "below_threshold",
        "openai",
    )
    assert data["messages"] == SENT
    assert seen.converted == []
    assert seen.validated == [len(SENT)]
    assert seen.built == len(seen.read) == CANONICAL


def expected(strategy: str, produced: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer of each strategy: the items sent that it keeps, where they were, and
    the ones it built."""
    if strategy == "full":  # summary, its acknowledgement, the restored file, its own
        return [*SENT[:2], *produced]
    if strategy == "tail":  # the last tool run moves to the summary, the user text stays
        return [*SENT[:2], *produced, SENT[12]]
    if strategy == "prune":  # the two older bash results cleared
        return [*SENT[:6], produced[0], SENT[7], produced[1], *SENT[9:]]
    # selective: the older tool blocks dropped, the ledger of what they held after the system
    return [*SENT[:2], *produced, SENT[2], *SENT[9:]]


ARCHIVED = {
    "full": SENT[2:],
    "tail": SENT[2:12],
    "prune": [SENT[6], SENT[8]],
    "selective": SENT[2:],
}


@pytest.mark.usefixtures("workdir_file")
@pytest.mark.parametrize("strategy", list(OPTIONS))
async def test_a_compaction_converts_only_what_it_builds_and_each_of_those_once(
    client: httpx.AsyncClient, seen: Seen, strategy: str
) -> None:
    options = {"strategy": strategy, "fallback": False, **OPTIONS[strategy]}
    body = {"messages": SENT, "format": "openai", "force": True, "options": options}
    data = (await client.post("/compact", json=body)).json()
    assert (data["compacted"], data["strategy"]) == (True, strategy), data
    assert seen.validated == [len(SENT)]
    assert seen.built == len(seen.read) == CANONICAL
    # Never a message as sent; each one the strategy built, once.
    ids = seen.converted_ids()
    assert len(ids) == len(set(ids))
    assert not set(ids) & {id(m) for m in seen.read}
    produced = seen.produced()
    assert len(produced) == {"full": 4, "tail": 2, "prune": 2, "selective": 1}[strategy]
    assert data["messages"] == expected(strategy, produced)
    archive = (await client.get(f"/archives/{data['archive']['id']}")).json()
    assert archive["messages"] == ARCHIVED[strategy]
    if strategy == "full":
        assert produced[2] == {
            "role": "user",
            "content": f"[Restored after compact] src/a.py:\n{SOURCE}",
        }
    if strategy == "tail":
        assert produced[1] == SENT[11]
    if strategy == "selective":
        assert produced[0]["role"] == "system"
        assert produced[0]["content"].startswith("## Ledger\n")
    if strategy == "prune":
        assert produced == [
            {
                "role": "tool",
                "tool_call_id": f"c{n}",
                "content": f"[Old tool result cleared: bash(command=make {n}), 300 tokens]",
            }
            for n in (1, 2)
        ]


@pytest.mark.parametrize("strategy", list(OPTIONS))
async def test_the_answer_and_archive_are_those_of_converting_every_message(
    tokenizer: TiktokenTokenizer, monkeypatch: pytest.MonkeyPatch, strategy: str
) -> None:
    """Reusing the items sent changes nothing: the answer and the archive are, byte for
    byte, those of a request whose every message is converted back."""
    options = {"strategy": strategy, "fallback": False, **OPTIONS[strategy]}
    body = CompactRequestBody.model_validate({"messages": SENT, "force": True, "options": options})

    async def answer() -> tuple[bytes, bytes]:
        archive = MemoryArchive()
        workdir = DictWorkdir({"src/a.py": SOURCE})
        service = build_service(tokenizer, ExtractiveSummarizer(), workdir=workdir, archive=archive)
        request = await compact_request(body, OpenAIForms(), service)
        result = await service.compact(request)
        assert result.compacted, result.reason
        archived = archive.saved["arch-1"].messages
        untimed = result.summarizer_cost.model_copy(update={"seconds": 0.0})  # a call's time
        result = result.model_copy(update={"summarizer_cost": untimed})
        return orjson.dumps(result_json(result, request.forms)), orjson.dumps(archived)

    reused = await answer()
    monkeypatch.setattr(dialects, "_as_sent", lambda item: False)
    assert await answer() == reused


async def test_a_background_job_reads_once_and_converts_only_what_it_builds(
    client: httpx.AsyncClient, seen: Seen
) -> None:
    body = {"messages": SENT, "force": True, "options": {"strategy": "full"}}
    response = await client.post("/compactions", json=body)
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    for _ in range(400):
        job = (await client.get(f"/compactions/{job_id}")).json()
        if job["state"] == "done":
            break
        await asyncio.sleep(0.005)
    assert job["state"] == "done", job
    assert job["result"]["compacted"] is True
    assert seen.validated == [len(SENT)]
    ids = seen.converted_ids()
    assert len(ids) == len(set(ids))
    assert not set(ids) & {id(m) for m in seen.read}
    assert [m for m in job["result"]["messages"] if m not in SENT] == seen.produced()


async def test_a_job_is_applied_without_converting_the_current_list(
    client_for: Callable[..., Any], seen: Seen
) -> None:
    client = await client_for()
    response = await client.post("/compactions", json={"messages": SENT, "force": True})
    job_id = response.json()["id"]
    for _ in range(400):
        if (await client.get(f"/compactions/{job_id}")).json()["state"] == "done":
            break
        await asyncio.sleep(0.005)
    before = len(seen.converted)
    current = [*SENT, {"role": "user", "content": "And now?"}]
    applied = await client.post(f"/compactions/{job_id}/apply", json={"messages": current})
    assert applied.status_code == 200, applied.text
    assert applied.json()["messages"][-1] == current[-1]
    assert applied.json()["kept_message_count"] == 1
    assert len(seen.converted) == before
