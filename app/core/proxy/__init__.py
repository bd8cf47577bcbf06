"""The transparent proxy's pure logic: which session a request belongs to (`sessions`),
how near it is to its limit (`limits`), the compacted head and where to cut (`splice`), the
provider's own count read from its answers (`usage`), whether an error says the context
was too long (`overflow`), and how fast a session grows (`pace`)."""

from app.core.proxy.limits import Marks, Stage, input_limit, output_budget, stage
from app.core.proxy.overflow import is_context_overflow
from app.core.proxy.pace import Pace
from app.core.proxy.sessions import credential_of, scoped_session_id, session_key
from app.core.proxy.splice import (
    MAX_BREAKPOINTS,
    Head,
    JsonDict,
    breakpoints,
    choose_cut,
    lasting,
    make_head,
    message_breakpoints,
    with_breakpoint,
    without_breakpoints,
)
from app.core.proxy.usage import Usage, UsageTap

__all__ = [
    "MAX_BREAKPOINTS",
    "Head",
    "JsonDict",
    "Marks",
    "Pace",
    "Stage",
    "Usage",
    "UsageTap",
    "breakpoints",
    "choose_cut",
    "credential_of",
    "input_limit",
    "is_context_overflow",
    "lasting",
    "make_head",
    "message_breakpoints",
    "output_budget",
    "scoped_session_id",
    "session_key",
    "stage",
    "with_breakpoint",
    "without_breakpoints",
]
