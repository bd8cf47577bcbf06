"""The fact ledger appended to every summary: its budget (`budget`), extracted and merged
(`extract`), fitted to its budget (`fit`), written as lines and read back (`lines`), and
standing alone as a system message (`standing`)."""

from app.core.ledger.budget import LedgerBudget, summary_words_for
from app.core.ledger.extract import LedgerReport, guard_summary
from app.core.ledger.standing import carried_ledger, is_ledger_message, ledger_message

__all__ = [
    "LedgerBudget",
    "LedgerReport",
    "carried_ledger",
    "guard_summary",
    "is_ledger_message",
    "ledger_message",
    "summary_words_for",
]
