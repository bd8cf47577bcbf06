"""Recall over a session's archives: the words indexed and looked up (`terms`), ranking and
snippets (`rank`), and the search itself (`search`)."""

from app.core.recall.rank import Candidate, PostingBudget, rank, snippet_bounds
from app.core.recall.search import (
    DEFAULT_RECALL_LIMIT,
    MAX_RECALL_LIMIT,
    SNIPPET_CHARS,
    RecallEntry,
    RecallHit,
    RecallResult,
    TimeLeft,
    check_deadline,
    hit,
    index_archive,
    recall_note,
)
from app.core.recall.terms import Query, WordStat, parse_query, word_stats

__all__ = [
    "DEFAULT_RECALL_LIMIT",
    "MAX_RECALL_LIMIT",
    "SNIPPET_CHARS",
    "Candidate",
    "PostingBudget",
    "Query",
    "RecallEntry",
    "RecallHit",
    "RecallResult",
    "TimeLeft",
    "WordStat",
    "check_deadline",
    "hit",
    "index_archive",
    "parse_query",
    "rank",
    "recall_note",
    "snippet_bounds",
    "word_stats",
]
