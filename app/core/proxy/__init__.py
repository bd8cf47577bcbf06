"""The transparent proxy's pure logic: which session a request belongs to (`sessions`),
how near it is to its limit (`limits`), the compacted head and where to cut (`splice`), the
messages an agent rebuilds for every request, kept apart from its history (`live`), the
project rules it sends, carried into every compacted request (`standing`), the
provider's own count read from its answers (`usage`), whether an error says the context
was too long (`overflow`), how fast a session grows (`pace`), the conversation a body
holds (`bodies`: a Responses `input` read by the Responses dialect), the requests that
go as sent because the provider holds or compacts their history (`native`), and a session
as replicas share it (`stored`)."""

from app.core.proxy.bodies import (
    RESPONSES_PATH,
    Shape,
    conversation,
    counted_json,
    with_conversation,
)
from app.core.proxy.limits import Marks, Stage, input_limit, output_budget, stage
from app.core.proxy.live import Split, split
from app.core.proxy.native import PASSED, passed_as_sent
from app.core.proxy.overflow import is_context_overflow, stream_overflow
from app.core.proxy.pace import Pace
from app.core.proxy.sessions import credential_of, scoped_session_id, session_key
from app.core.proxy.splice import (
    Head,
    JsonDict,
    choose_cut,
    make_head,
    message_breakpoints,
    with_breakpoint,
    within_four,
    without_breakpoints,
)
from app.core.proxy.standing import carried, standing, standing_tokens
from app.core.proxy.stored import (
    MemorySessionStore,
    ProxySessionStore,
    SessionState,
    StoredSession,
    clock_offset,
    decode_head,
    decode_state,
    encode_head,
    encode_state,
)
from app.core.proxy.usage import Usage, UsageTap

__all__ = [
    "PASSED",
    "RESPONSES_PATH",
    "Head",
    "JsonDict",
    "Marks",
    "MemorySessionStore",
    "Pace",
    "ProxySessionStore",
    "SessionState",
    "Shape",
    "Split",
    "Stage",
    "StoredSession",
    "Usage",
    "UsageTap",
    "carried",
    "choose_cut",
    "clock_offset",
    "conversation",
    "counted_json",
    "credential_of",
    "decode_head",
    "decode_state",
    "encode_head",
    "encode_state",
    "input_limit",
    "is_context_overflow",
    "make_head",
    "message_breakpoints",
    "output_budget",
    "passed_as_sent",
    "scoped_session_id",
    "session_key",
    "split",
    "stage",
    "standing",
    "standing_tokens",
    "stream_overflow",
    "with_breakpoint",
    "with_conversation",
    "within_four",
    "without_breakpoints",
]
