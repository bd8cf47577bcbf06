"""Recall: search a session's archived messages, so nothing compacted is out of reach.

Every compaction archives the originals it replaced; the summary and its ledger keep the
facts, the archive keeps everything. `index_archive` turns one stored archive (its
messages as JSON, in the Anthropic or the OpenAI shape) into one searchable entry per
message; `search` ranks the entries of many archives against a query and cuts a snippet
around the match. Pure: the store decides which archives belong to the session.

Ranking: the query's words (case-insensitive) are looked up in each message. A message
scores by how many distinct words it holds (ten points each), plus its occurrences (at
most five a word), plus twenty when it holds the whole query as typed (whitespace-
normalised); at least one word must be there. Ties go to the newer archive, then to the
later message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_RECALL_LIMIT = 5
MAX_RECALL_LIMIT = 50
SNIPPET_CHARS = 400
_TERM = re.compile(r"[\w][\w./:-]*")


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
class RecallEntry:
    """One archived message, ready to search: its text and the text lowercased."""

    message_index: int
    role: str
    tool_name: str | None
    text: str
    lowered: str


def index_archive(messages: Sequence[Mapping[str, Any]]) -> tuple[RecallEntry, ...]:
    """One entry per archived message (Anthropic or OpenAI shape), tool names resolved
    through the archive's own tool calls."""
    names: dict[str, str] = {}
    for message in messages:
        for call_id, name in _calls(message):
            names[call_id] = name
    entries = []
    for index, message in enumerate(messages):
        text = _text(message)
        if text:
            entries.append(
                RecallEntry(
                    index,
                    str(message.get("role", "")),
                    _tool_name(message, names),
                    text,
                    text.lower(),
                )
            )
    return tuple(entries)


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


def terms(query: str) -> list[str]:
    """The query's words, lowercased, each once (paths and dotted names stay whole)."""
    return list(dict.fromkeys(_TERM.findall(query.lower())))


def search(
    archives: Iterable[tuple[str, Sequence[RecallEntry]]],
    query: str,
    limit: int = DEFAULT_RECALL_LIMIT,
    snippet_chars: int = SNIPPET_CHARS,
) -> list[RecallHit]:
    """The best `limit` matches of `query` in `archives` (oldest archive first), best first."""
    words = terms(query)
    phrase = " ".join(query.lower().split())
    if not words or limit <= 0:
        return []
    scored: list[tuple[int, int, RecallEntry, str]] = []
    for order, (archive_id, entries) in enumerate(archives):
        for entry in entries:
            score = _score(entry.lowered, words, phrase)
            if score:
                scored.append((score, order, entry, archive_id))
    scored.sort(key=lambda item: (-item[0], -item[1], -item[2].message_index))
    return [
        RecallHit(
            archive_id,
            entry.message_index,
            entry.role,
            entry.tool_name,
            snippet(entry, words, phrase, snippet_chars),
            score,
        )
        for score, _, entry, archive_id in scored[:limit]
    ]


def _score(lowered: str, words: Sequence[str], phrase: str) -> int:
    score = 0
    for word in words:
        found = lowered.count(word)
        if found:
            score += 10 + min(found, 5)
    if score and len(words) > 1 and phrase in " ".join(lowered.split()):
        score += 20
    return score


def snippet(entry: RecallEntry, words: Sequence[str], phrase: str, chars: int) -> str:
    """About `chars` characters of the message around its first match, whitespace
    collapsed, with `…` where it was cut."""
    at = entry.lowered.find(phrase)
    if at < 0:
        found = [p for p in (entry.lowered.find(w) for w in words) if p >= 0]
        at = min(found) if found else 0
    start = max(0, at - chars // 4)
    end = min(len(entry.text), start + chars)
    start = max(0, min(start, end - chars))
    text = " ".join(entry.text[start:end].split())
    return f"{'… ' if start > 0 else ''}{text}{' …' if end < len(entry.text) else ''}"


def recall_note(session_id: str) -> str:
    """The closing line of a summary: what was compacted can be looked up, and how."""
    return (
        "earlier details of this session (exact tool outputs, errors, file contents, "
        "messages) are archived, not lost: to look one up, call the `recall` tool with a "
        f'query (POST /sessions/{session_id}/recall {{"query": "..."}}).'
    )
