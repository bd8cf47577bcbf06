"""The toolkit routes' pure logic: tool results compressed by rule (`results`, `rules`,
within `limits`), `@path` mentions (`mentions`) and the context's layers (`layers`)."""

from app.core.toolkit.layers import (
    RULES_FILE,
    ContextLayers,
    Layer,
    assemble_layers,
    pick_rules_file,
)
from app.core.toolkit.limits import ToolResultLimits
from app.core.toolkit.mentions import append_reminders, find_mentions
from app.core.toolkit.results import (
    CompressedResult,
    ToolResult,
    compress_tool_result,
    parse_output,
    rule_for,
    stray_fields,
)
from app.core.toolkit.rules import PATH_FIELDS

__all__ = [
    "PATH_FIELDS",
    "RULES_FILE",
    "CompressedResult",
    "ContextLayers",
    "Layer",
    "ToolResult",
    "ToolResultLimits",
    "append_reminders",
    "assemble_layers",
    "compress_tool_result",
    "find_mentions",
    "parse_output",
    "pick_rules_file",
    "rule_for",
    "stray_fields",
]
