"""The providers' shapes: the OpenAI Chat form (`dialects`) and the Responses API's
`input` items (`responses`) in and out of the canonical (Anthropic) messages, the three
formats detected, parsed and dumped (`formats`), the rules a provider holds a conversation
to (`rules`), the provider request handed back around the compacted messages (`request`),
the models as agents name them (`model_names`), what images and PDFs cost by the
providers' rules (`media`) and the output a request reserves (`budget`)."""

from app.core.provider.budget import OutputBudget, output_budget
from app.core.provider.dialects import BOOKKEEPING, OpenAIForms, OpenAIMessage, to_anthropic
from app.core.provider.formats import detect_format, dump_as, forms_for, parse_messages
from app.core.provider.media import (
    FILE_PART_TYPES,
    IMAGE_PART_TYPES,
    MEDIA_PLACEHOLDER,
    anthropic_image_tokens,
    document_text,
    media_tokens,
    openai_file_part_tokens,
    openai_image_part_tokens,
    pdf_source_tokens,
    source_size,
)
from app.core.provider.model_names import closest_names, find_model
from app.core.provider.request import ProviderRequest, hand_back
from app.core.provider.responses import ResponsesItem, message_to_responses, read_items
from app.core.provider.rules import Violation, violations

__all__ = [
    "BOOKKEEPING",
    "FILE_PART_TYPES",
    "IMAGE_PART_TYPES",
    "MEDIA_PLACEHOLDER",
    "OpenAIForms",
    "OpenAIMessage",
    "OutputBudget",
    "ProviderRequest",
    "ResponsesItem",
    "Violation",
    "anthropic_image_tokens",
    "closest_names",
    "detect_format",
    "document_text",
    "dump_as",
    "find_model",
    "forms_for",
    "hand_back",
    "media_tokens",
    "message_to_responses",
    "openai_file_part_tokens",
    "openai_image_part_tokens",
    "output_budget",
    "parse_messages",
    "pdf_source_tokens",
    "read_items",
    "source_size",
    "to_anthropic",
    "violations",
]
