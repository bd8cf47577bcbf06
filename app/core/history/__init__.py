"""What a history shows, read once from its messages (`facts`): file operations by the
agents' tool vocabularies (`file_ops`), errors and the line that names them (`failures`), the
user's own words apart from the harness's text (`harness`, `own_words`), and rounds
(`rounds`)."""

from app.core.history.facts import (
    COMMANDS_LINE,
    EDITOR_TOOLS,
    ERROR_LINE_CHARS,
    ExtractedFacts,
    command_item,
    cut_words,
    extract_facts,
    listed_commands,
    one_line,
)
from app.core.history.failures import (
    CLEARED_PREFIX,
    FAILED_MARK,
    KEY_LINE_SEPARATOR,
    error_line,
    occurrences,
)
from app.core.history.file_ops import (
    DEFAULT_VOCABULARY,
    FILE_KINDS,
    FileOp,
    FileTracker,
    Vocabulary,
    shell_command,
)
from app.core.history.harness import PART_OPENING, user_words
from app.core.history.own_words import request_fact
from app.core.history.rounds import Round, opens_round, segment_rounds

__all__ = [
    "CLEARED_PREFIX",
    "COMMANDS_LINE",
    "DEFAULT_VOCABULARY",
    "EDITOR_TOOLS",
    "ERROR_LINE_CHARS",
    "FAILED_MARK",
    "FILE_KINDS",
    "KEY_LINE_SEPARATOR",
    "PART_OPENING",
    "ExtractedFacts",
    "FileOp",
    "FileTracker",
    "Round",
    "Vocabulary",
    "command_item",
    "cut_words",
    "error_line",
    "extract_facts",
    "listed_commands",
    "occurrences",
    "one_line",
    "opens_round",
    "request_fact",
    "segment_rounds",
    "shell_command",
    "user_words",
]
