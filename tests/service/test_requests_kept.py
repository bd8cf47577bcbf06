"""Every request of the user survives a long session compacted again and again by `full`:
many requests among many facts that outrank or crowd them (flagged failures, files
changed and read, distinct commands, identifiers), the ledger's budget far too small for
all of them, the previous ledger parsed and merged at each compaction. Each request is
in the final context: in the summary, the ledger or a kept message."""

from __future__ import annotations

from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.ledger.lines import parse_ledger
from app.core.messages import Message, dump_messages
from app.core.options.compact import CompactOptions
from app.service.compaction import CompactRequest
from tests.builders import (
    FakeSummarizer,
    assistant,
    build_service,
    parse,
    system,
    tool_result,
    tool_use,
    user,
)

TOKENIZER = TiktokenTokenizer()
SUMMARY = "\n".join(f"## {h}\n- the work so far" for h in ("Goals", "Progress", "Next"))
OUTPUT = "\n".join(f"row {i}: total = sum(part_{i})" for i in range(60))
WINDOW = 16_000
BUDGET = 1000  # tokens: every request whole, a few facts of each other kind
# A request that is mostly a paste around the user's question.
PASTE = "\n".join(f"2026-11-25 10:{i:02d}:07 INFO worker-{i} heartbeat ok" for i in range(40))


def request(n: int) -> str:
    return f"Request {n}: teach the importer about column kind C{n} and keep old files readable."


def pasted_request(n: int) -> tuple[str, str]:
    """The message and the user's own words that must survive."""
    asked = f"Why does worker {n} stop after the heartbeat below?"
    return f"{asked}\n{PASTE}", asked


def stretch(n: int) -> tuple[list[dict[str, Any]], list[str]]:
    """One stretch of work: a request, then changed and read files, commands with distinct
    arguments, a flagged failure, an identifier; and what the user asked in it."""
    if n % 3 == 2:
        text, asked = pasted_request(n)
    else:
        text = asked = request(n)
    out = [user(text)]
    for k in range(3):
        i = f"{n}_{k}"
        out += [
            assistant(f"Step {i}.", tool_use("edit_file", f"e{i}", path=f"src/pkg_{n}/m{k}.py")),
            tool_result(f"e{i}", "ok"),
            assistant("Reading.", tool_use("read_file", f"r{i}", path=f"docs/d{n}_{k}.md")),
            tool_result(f"r{i}", OUTPUT),
            assistant("Running.", tool_use("bash", f"c{i}", command=f"pytest tests/t{n}_{k}.py")),
            tool_result(
                f"c{i}", f"ValueError: row {n}{k} has no kind id=ab{n}{k}cd9f", is_error=True
            ),
        ]
    out.append(assistant(f"Done with part {n}; commit 9f{n:02d}e3a1b is ready."))
    return out, [asked]


def flat(messages: list[Message]) -> str:
    return " ".join(str(dump_messages(messages)).replace("\\n", " ").split())


@pytest.mark.anyio
async def test_full_keeps_every_request_through_many_compactions() -> None:
    service = build_service(TOKENIZER, FakeSummarizer(lambda r: SUMMARY), ledger_budget=BUDGET)
    options = CompactOptions(strategy="full", context_window=WINDOW, fallback=False)
    context: list[dict[str, Any]] = [system("You are a coding agent.")]
    asked: list[str] = []
    compactions = 0
    for n in range(24):
        more, said = stretch(n)
        context += more
        asked += said
        if n % 4 == 3:
            result = await service.compact(CompactRequest(parse(context), options, force=True))
            assert result.compacted, result.reason
            compactions += 1
            context = dump_messages(result.messages)
            text = flat(result.messages)
            for words in asked:
                assert words in text, (compactions, words)
    assert compactions == 6
    summary = str(context[1]["content"])
    ledger = parse_ledger(summary)
    # in order, each opening with the user's words (a pasted one goes on with some paste)
    listed = [f.text for f in ledger if f.kind in ("goal", "request")]
    assert len(listed) == len(asked)
    assert all(text.startswith(words) for text, words in zip(listed, asked, strict=True))
    assert any(f.kind == "error" for f in ledger)  # the other kinds keep their floors
    assert any(f.kind == "file_changed" for f in ledger)
    assert any(f.kind == "command" for f in ledger)
    assert TOKENIZER.count(summary[summary.index("## Ledger") :]) <= BUDGET


@pytest.mark.anyio
async def test_the_first_request_after_a_compaction_keeps_the_users_own_words() -> None:
    """After a compaction, the next span's first request is a later request, not the goal:
    kept in the user's own words like any other, not cut to its first characters (here a
    paste that comes before the question)."""
    service = build_service(TOKENIZER, FakeSummarizer(lambda r: SUMMARY), ledger_budget=BUDGET)
    options = CompactOptions(strategy="full", context_window=WINDOW, fallback=False)
    first, _ = stretch(0)
    result = await service.compact(
        CompactRequest(parse([system("s"), *first]), options, force=True)
    )
    question = "Which of these workers should I restart first, and why?"
    later = [user(f"{PASTE}\n{question}"), assistant("Looking."), *stretch(1)[0]]
    result = await service.compact(
        CompactRequest([*result.messages, *parse(later)], options, force=True)
    )
    ledger = parse_ledger(str(dump_messages(result.messages)[1]["content"]))
    asked = [f.text for f in ledger if f.kind == "request"]
    assert [f.text for f in ledger if f.kind == "goal"] == [request(0)]
    assert len(asked) == 2
    assert question in asked[0]
    assert asked[1] == request(1)
