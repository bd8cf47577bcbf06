"""The providers' shapes: the OpenAI Chat form (`dialects`) and the Responses API's
`input` items (`responses`) in and out of the canonical (Anthropic) messages, the three
formats detected, parsed and dumped (`formats`), the rules a provider holds a conversation
to (`rules`), and the provider request handed back around the compacted messages
(`request`)."""

from app.core.provider.dialects import BOOKKEEPING, OpenAIForms, OpenAIMessage, to_anthropic
from app.core.provider.formats import detect_format, dump_as, forms_for, parse_messages
from app.core.provider.request import ProviderRequest, hand_back
from app.core.provider.responses import ResponsesItem
from app.core.provider.rules import Violation, violations

__all__ = [
    "BOOKKEEPING",
    "OpenAIForms",
    "OpenAIMessage",
    "ProviderRequest",
    "ResponsesItem",
    "Violation",
    "detect_format",
    "dump_as",
    "forms_for",
    "hand_back",
    "parse_messages",
    "to_anthropic",
    "violations",
]
