"""Recall over a session's archives: the words indexed and looked up (`terms`), ranking and
snippets (`rank`), and the search itself (`search`)."""

from app.core.recall.postings import (
    Posting,
    PostingsError,
    bucket_of,
    decode_postings,
    find_postings,
    pack_buckets,
    pack_words,
    postings_by_word,
)
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
    defines_recall_tool,
    entry_text,
    hit,
    index_archive,
    recall_note,
)
from app.core.recall.terms import Query, WordStat, parse_query

__all__ = [
    "DEFAULT_RECALL_LIMIT",
    "MAX_RECALL_LIMIT",
    "SNIPPET_CHARS",
    "Candidate",
    "Posting",
    "PostingBudget",
    "PostingsError",
    "Query",
    "RecallEntry",
    "RecallHit",
    "RecallResult",
    "TimeLeft",
    "WordStat",
    "bucket_of",
    "check_deadline",
    "decode_postings",
    "defines_recall_tool",
    "entry_text",
    "find_postings",
    "hit",
    "index_archive",
    "pack_buckets",
    "pack_words",
    "parse_query",
    "postings_by_word",
    "rank",
    "recall_note",
    "snippet_bounds",
]
