"""The toolkit routes' settings beside the tool-result limits (`ToolResultLimits`, whose
settings are declared with its fields): reminders of `@file` mentions, the project rules'
size."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MentionLimit = Annotated[
    int,
    Field(5, ge=0, description='`@file` mentions named in reminders, then "(and N more…)"'),
]

ProjectRulesMaxBytes = Annotated[
    int,
    Field(
        256 * 1024,
        gt=0,
        description="a larger `CODE_LAW.md` is not injected (`skipped: too_large`)",
    ),
]
