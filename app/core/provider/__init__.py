"""The providers' shapes: the OpenAI Chat form in and out of the canonical (Anthropic)
messages (`dialects`), the rules a provider holds a conversation to (`rules`), and the
provider request handed back around the compacted messages (`request`)."""

from app.core.provider.dialects import (
    BOOKKEEPING,
    OpenAIForms,
    OpenAIMessage,
    detect_format,
    dump_as,
    parse_messages,
    to_anthropic,
)
from app.core.provider.request import ProviderRequest, hand_back
from app.core.provider.rules import Violation, violations

__all__ = [
    "BOOKKEEPING",
    "OpenAIForms",
    "OpenAIMessage",
    "ProviderRequest",
    "Violation",
    "detect_format",
    "dump_as",
    "hand_back",
    "parse_messages",
    "to_anthropic",
    "violations",
]
