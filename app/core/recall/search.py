"""Recall: search a session's archived messages, so nothing compacted is out of reach.

Every compaction archives the originals it replaced; the summary and its ledger keep the
facts, the archive keeps everything. `index_archive` turns one stored archive (its
messages as JSON, in the Anthropic or the OpenAI shape) into one searchable entry per
message; a store indexes each entry's words (`app.core.recall.terms`) when it writes the
archive, and ranks what its index finds with `app.core.recall.rank`. `search` is the same
recall over entries held in memory. Pure: the store decides which archives belong to the
session. Originals come before the service's own texts (earlier summaries and ledgers,
archived again by each compaction), each archived message once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.assemble import RESTORED_ACK, RESTORED_PREFIX, SUMMARY_ACK, SUMMARY_PREFIX
from app.core.errors import RecallDeadlineError
from app.core.recall.rank import (
    COPY_MARK,
    Candidate,
    Ranked,
    cut_snippet,
    message_digest,
    rank,
    snippet_bounds,
)
from app.core.recall.terms import Query, WordStat, parse_query, storable, word_stats

# How the texts the service itself put in a context open: summaries, ledgers, restored
# files, cleared results and the acknowledgements. Archived again by every later
# compaction, they are copies of what the originals hold. (`tail`'s archived summary,
# the ledger's heading and `prune`'s stub are spelled here: recall sits below the
# families that write them; tests/core/recall/test_search.py holds them equal.)
ARCHIVED_SUMMARY_TITLE = "## \U0001f4cc Archived Session Summary"
LEDGER_OPENER = "## Ledger\n"
CLEARED_OPENER = "[Old tool result cleared: "
COPY_OPENERS = (
    SUMMARY_PREFIX.strip(),
    RESTORED_PREFIX.strip(),
    ARCHIVED_SUMMARY_TITLE,
    LEDGER_OPENER,
    CLEARED_OPENER,
    SUMMARY_ACK,
    RESTORED_ACK,
)
DEFAULT_RECALL_LIMIT = 5
MAX_RECALL_LIMIT = 50
SNIPPET_CHARS = 400


@dataclass(frozen=True)
class RecallHit:
    """One archived message that matches: where it is, who wrote it, and a snippet."""

    archive_id: str
    message_index: int
    role: str
    tool_name: str | None
    snippet: str
    score: int


@dataclass(frozen=True)
class RecallResult:
    """A store's answer: the hits, and whether every archive of the session was searched
    (false when some were not indexed yet and the recall's indexing budget ran out)."""

    hits: list[RecallHit]
    complete: bool = True


TimeLeft = Callable[[], float]  # seconds before the recall's deadline


def check_deadline(time_left: TimeLeft) -> None:
    """Raises `RecallDeadlineError` once the deadline has passed: stores call it between
    steps, so a late recall stops its work instead of finishing it for nobody."""
    if time_left() <= 0:
        raise RecallDeadlineError("the recall passed its deadline")


@dataclass(frozen=True)
class RecallEntry:
    """One archived message, ready to search: its text (storable: see `storable`)."""

    message_index: int
    role: str
    tool_name: str | None
    text: str

    @property
    def digest(self) -> str:
        """`message_digest`, marked `COPY_MARK` for a text the service wrote (a summary,
        a ledger, a restored file: `COPY_OPENERS`), which recall ranks after originals."""
        digest = message_digest(self.role, self.text)
        return f"{COPY_MARK}{digest}" if self.text.startswith(COPY_OPENERS) else digest


def index_archive(messages: Sequence[Mapping[str, Any]]) -> tuple[RecallEntry, ...]:
    """One entry per archived message (Anthropic or OpenAI shape), tool names resolved
    through the archive's own tool calls."""
    names: dict[str, str] = {}
    for message in messages:
        for call_id, name in _calls(message):
            names[call_id] = name
    entries = []
    for index, message in enumerate(messages):
        text = entry_text(message)
        if text:
            tool_name = _tool_name(message, names)
            entries.append(
                RecallEntry(
                    index,
                    storable(str(message.get("role", ""))),
                    None if tool_name is None else storable(tool_name),
                    text,
                )
            )
    return tuple(entries)


def entry_text(message: Mapping[str, Any]) -> str:
    """The text recall indexes of one archived message (its entry's, when it has one): a
    store that keeps no text reads it from the archived message for a snippet."""
    return storable(_text(message))


def _calls(message: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                yield str(block.get("id", "")), str(block.get("name", ""))
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            function = call.get("function") or {}
            yield str(call.get("id", "")), str(function.get("name", ""))


def _tool_name(message: Mapping[str, Any], names: Mapping[str, str]) -> str | None:
    own = [name for _, name in _calls(message) if name]
    if own:
        return ",".join(dict.fromkeys(own))
    if message.get("role") == "tool":
        return names.get(str(message.get("tool_call_id", "")))
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return names.get(str(block.get("tool_use_id", "")))
    return None


def _text(message: Mapping[str, Any]) -> str:
    parts: list[str] = []
    _collect(message.get("content"), parts)
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            function = call.get("function") or {}
            parts.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(p for p in parts if p).strip()


def _collect(content: object, parts: list[str]) -> None:
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                kind = block.get("type")
                if kind == "text" and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif kind == "tool_use":
                    arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
                    parts.append(f"{block.get('name', '')} {arguments}")
                elif kind == "tool_result":
                    _collect(block.get("content"), parts)


def candidates(
    archives: Iterable[tuple[str, Sequence[RecallEntry]]], query: Query
) -> Iterator[Candidate]:
    """Every message of `archives` (oldest first) holding a word of the query, as a store
    with an index would find it."""
    wanted = set(query.words)
    for order, (archive_id, entries) in enumerate(archives):
        for entry in entries:
            stats = word_stats(entry.text)
            found = {word: stats[word] for word in wanted & stats.keys()}
            if found:
                yield candidate(order, archive_id, entry, found)


def candidate(
    order: int, archive_id: str, entry: RecallEntry, words: Mapping[str, WordStat]
) -> Candidate:
    return Candidate(
        order,
        archive_id,
        entry.message_index,
        entry.role,
        entry.tool_name,
        entry.digest,
        len(entry.text),
        words,
    )


def hit(ranked: Ranked, window: str, chars: int = SNIPPET_CHARS) -> RecallHit:
    """The hit of a ranked candidate, `window` being its text in `snippet_bounds`."""
    c = ranked.candidate
    start, end = snippet_bounds(ranked.at, c.length, chars)
    snippet = cut_snippet(window, start, end, c.length)
    return RecallHit(c.archive_id, c.message_index, c.role, c.tool_name, snippet, ranked.score)


def search(
    archives: Iterable[tuple[str, Sequence[RecallEntry]]],
    query: str | Query,
    limit: int = DEFAULT_RECALL_LIMIT,
    snippet_chars: int = SNIPPET_CHARS,
) -> list[RecallHit]:
    """The best `limit` matches of `query` in `archives` (oldest archive first), best first:
    the whole recall on entries held in memory."""
    archives = list(archives)
    texts = {(a, e.message_index): e.text for a, entries in archives for e in entries}
    parsed = parse_query(query) if isinstance(query, str) else query
    hits = []
    for ranked in rank(candidates(archives, parsed), parsed, limit):
        c = ranked.candidate
        start, end = snippet_bounds(ranked.at, c.length, snippet_chars)
        hits.append(hit(ranked, texts[c.archive_id, c.message_index][start:end], snippet_chars))
    return hits


RECALL_TOOL = "recall"


def defines_recall_tool(tools: Sequence[Mapping[str, Any]]) -> bool:
    """Whether tool definitions (Anthropic's, Chat's `function`, or the Responses API's)
    include the `recall` tool: only then does a summary tell the model to call it."""
    for tool in tools:
        function = tool.get("function")
        named = function.get("name") if isinstance(function, Mapping) else tool.get("name")
        if named == RECALL_TOOL:
            return True
    return False


def recall_note(session_id: str) -> str:
    """The closing line of a summary: what was compacted can be looked up, and how (written
    only when the request defines the tool it names: `defines_recall_tool`)."""
    return (
        "earlier details of this session (exact tool outputs, errors, file contents, "
        "messages) are archived, not lost: to look one up, call the `recall` tool with a "
        f'query (POST /sessions/{session_id}/recall {{"query": "..."}}).'
    )
