"""A compaction reads its history's facts once: the extractive summary and the ledger share
them, so each tool result is searched for its error line once and each call's file
operations are read once, whichever strategy summarizes."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.history import failures, file_ops
from app.core.options.compact import CompactOptions
from app.core.summary.extractive import ExtractiveSummarizer
from app.service.compaction import CompactRequest
from tests.builders import (
    assistant,
    build_service,
    parse,
    system,
    tool_result,
    tool_use,
    user,
)

pytestmark = pytest.mark.anyio

HISTORY: list[dict[str, Any]] = [
    system("You are a coding agent."),
    user("Fix the failing test in src/app.py."),
    assistant(tool_use("bash", "c1", command="pytest -q")),
    tool_result("c1", "FAILED tests/test_app.py::test_x\nError: boom"),
    assistant(tool_use("read_file", "c2", path="src/app.py")),
    tool_result("c2", "".join(f"def app_{n}():\n    return {n}\n" for n in range(300))),
    assistant(tool_use("bash", "c3", command="cat src/app.py && sed -i s/1/2/ src/app.py")),
    tool_result("c3", "ok"),
    assistant("Fixed."),
    user("Now run the tests again."),
    assistant(tool_use("bash", "c4", command="pytest -q")),
    tool_result("c4", "1 passed"),
    assistant("All green."),
]


@pytest.fixture
def searched(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each tool result's text is searched for an error line, and how often each
    call's file operations are read (by call id)."""
    seen: Counter[str] = Counter()
    search = failures.error_line

    def counted_search(text: str, is_error: bool | None = False, tool: str = "") -> str | None:
        seen[f"result:{text[:20]}"] += 1
        return search(text, is_error, tool)

    read = file_ops.FileTracker.operations

    def counted_read(self: file_ops.FileTracker, call: Any) -> list[file_ops.FileOp]:
        seen[f"call:{call.id}"] += 1
        return read(self, call)

    # Wherever it was imported: a second reader anywhere in the app would be counted too.
    for name, module in list(sys.modules.items()):
        if name.startswith("app.") and getattr(module, "error_line", None) is search:
            monkeypatch.setattr(module, "error_line", counted_search)
    monkeypatch.setattr(file_ops.FileTracker, "operations", counted_read)
    return seen


@pytest.mark.parametrize("strategy", ["full", "tail"])
async def test_each_result_is_searched_and_each_call_read_once_a_compaction(
    tokenizer: TiktokenTokenizer, searched: Counter[str], strategy: str
) -> None:
    service = build_service(tokenizer, ExtractiveSummarizer())
    options = CompactOptions(
        strategy=strategy, tail_keep_recent_rounds=1, fallback=False, ledger_budget=2000
    )
    result = await service.compact(
        CompactRequest(messages=parse(HISTORY), options=options, force=True)
    )
    assert result.compacted, result.reason
    results = {k for k in searched if k.startswith("result:")}
    calls = {k for k in searched if k.startswith("call:")}
    # `tail` keeps the last round (c4) as sent: only the older part is read.
    older = {"c1", "c2", "c3"} | ({"c4"} if strategy == "full" else set())
    assert calls == {f"call:{c}" for c in older}
    assert len(results) == len(older)
    assert set(searched.values()) == {1}
    # The summary and the ledger both show what was read once.
    assert "FAILED tests/test_app.py::test_x" in (result.summary or "")
    kinds = {fact.kind: fact.text for fact in result.ledger}
    assert kinds["error"].startswith("bash `pytest -q`: FAILED tests/test_app.py::test_x")
    # Read, then edited: listed once, with its change.
    assert kinds["file_changed"].startswith("src/app.py (")
    assert "file_read" not in kinds
