"""Request and response of `POST /sessions/{session_id}/recall`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.core.recall import DEFAULT_RECALL_LIMIT, MAX_RECALL_LIMIT


class RecallRequest(BaseModel):
    """What to look for in the session's archived messages."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"query": "IndentationError fields.py", "limit": 3}]},
    )
    query: str = Field(
        min_length=1,
        max_length=2000,
        description=(
            "Words to look for (case-insensitive, whole words): a path, an error, a command, "
            "a name. Messages holding more of the terms rank first, all of them higher; only "
            "the first 64 distinct terms are searched (the others come back in "
            "`dropped_terms`)."
        ),
    )
    limit: int = Field(
        DEFAULT_RECALL_LIMIT, ge=1, le=MAX_RECALL_LIMIT, description="Matches returned, at most."
    )


class RecallHitInfo(BaseModel):
    """One archived message that matches."""

    archive_id: str = Field(description="The archive holding the message (`GET /archives/{id}`).")
    message_index: int = Field(description="The message's index among the archive's messages.")
    role: str
    tool_name: str | None = Field(
        None, description="The tool called, or the tool whose result this message carries."
    )
    snippet: str = Field(description="About 400 characters around the match; `…` where cut.")
    score: int = Field(description="Higher is a better match (see docs/recall.md).")


class RecallResponse(BaseModel):
    """The matches in the session's archives, best first."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "session_id": "session-42",
                    "query": "IndentationError fields.py",
                    "hits": [
                        {
                            "archive_id": "01795389068102951832-bb8a6efe30a6",
                            "message_index": 14,
                            "role": "user",
                            "tool_name": "edit",
                            "snippet": "ERRORS: - E999 IndentationError: unexpected indent …",
                            "score": 22,
                        }
                    ],
                    "dropped_terms": [],
                    "complete": True,
                }
            ]
        }
    )
    session_id: str
    query: str
    hits: list[RecallHitInfo] = Field(description="Best first; empty when nothing matched.")
    dropped_terms: list[str] = Field(
        default_factory=list,
        description="The query's terms past the first 64, not searched (case-folded).",
    )
    complete: bool = Field(
        True,
        description=(
            "False when some of the session's archives were not searched: written before "
            "the recall index, they are indexed a few per recall (ask again)."
        ),
    )
