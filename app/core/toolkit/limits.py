"""How much of each kind of tool result history keeps (`ToolResultLimits`), each limit
declared once: its request field (a `/compress-tool-result` body may send its own) and,
beside it, the server's setting (`COMPACT_TOOL_RESULT_<NAME>`, read into
`Settings.tool_results`). A setting's default is its field's."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.core.options import setting


class ToolResultLimits(BaseModel):
    """How much of each kind of tool result history keeps."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    read_lines: Annotated[
        int,
        setting(
            "tool_result_read_lines",
            description="`Read` results: lines kept in history",
            ge=1,
        ),
    ] = Field(500, ge=1, le=100_000, description="Read: lines kept.")
    grep_matches: Annotated[
        int,
        setting(
            "tool_result_grep_matches",
            description="`Grep` results: matches kept",
            ge=1,
        ),
    ] = Field(5, ge=1, le=1000, description="Grep: matches kept.")
    glob_hits: Annotated[
        int,
        setting(
            "tool_result_glob_hits",
            description="`Glob` results: paths kept",
            ge=1,
        ),
    ] = Field(10, ge=1, le=1000, description="Glob: paths kept.")
    ls_entries: Annotated[
        int,
        setting(
            "tool_result_ls_entries",
            description="`LS` results: entries kept",
            ge=1,
        ),
    ] = Field(20, ge=1, le=1000, description="LS: entries kept.")
    edit_lines: Annotated[
        int,
        setting(
            "tool_result_edit_lines",
            description="`Edit`/`MultiEdit`: new lines kept",
            ge=1,
        ),
    ] = Field(20, ge=1, le=1000, description="Edit: new lines kept.")
    write_lines: Annotated[
        int,
        setting(
            "tool_result_write_lines",
            description="`Write`: first lines kept",
            ge=1,
        ),
    ] = Field(50, ge=1, le=1000, description="Write: first lines kept.")
    bash_stdout_head: Annotated[
        int,
        setting(
            "tool_result_bash_stdout_head",
            description="`Bash`: first stdout lines kept",
            ge=0,
        ),
    ] = Field(3, ge=0, le=1000, description="Bash: first stdout lines.")
    bash_stdout_tail: Annotated[
        int,
        setting(
            "tool_result_bash_stdout_tail",
            description="`Bash`: last stdout lines kept",
            ge=0,
        ),
    ] = Field(5, ge=0, le=1000, description="Bash: last stdout lines.")
    bash_stderr_lines: Annotated[
        int,
        setting(
            "tool_result_bash_stderr_lines",
            description="`Bash`: last stderr lines kept",
            ge=0,
        ),
    ] = Field(20, ge=0, le=1000, description="Bash: last stderr lines.")
    todo_items: Annotated[
        int,
        setting(
            "tool_result_todo_items",
            description="`TodoWrite`: in-progress items named in the recap",
            ge=0,
        ),
    ] = Field(3, ge=0, le=100, description="TodoWrite: in-progress items named.")
    fallback_chars: Annotated[
        int,
        setting(
            "tool_result_fallback_chars",
            description="other tools: longer results are cut to this many characters",
            ge=1,
        ),
    ] = Field(2000, ge=1, le=1_000_000, description="Other tools: longer results are cut here.")
