"""Is this text a summary? The rules, in one place, that every LLM summary passes before
the service uses it, and the closed vocabulary of reasons a summary fails.

An LLM that answers 200 does not always answer with a summary: a refusal ("I'm sorry, I
can't help with that."), an apology, an error its server wrapped as text ("Error: The model
`x` does not exist"), a summary cut off by the length limit, one that ignored `max_tokens`
and runs to megabytes, or prose that ignores the structure the prompt asked for. Stored as
the summary, any of these replaces the agent's history with a sentence. Each is a
`SummarizerError` with a reason here, so the configured fallback runs or the messages come
back unchanged.

Order of the checks (the first that fails names the reason):
1. `truncated` / `refusal` / `filtered`: the provider's stop reason said so
   (`stop_failure`, applied by the adapters, which see it).
2. `empty`: nothing but whitespace.
3. `oversized`: more than `cap_tokens` tokens (a text longer than `MAX_CHARS_PER_TOKEN`
   characters a token over the cap is oversized without being counted).
4. `no_sections` and its finer names: a text with none of the section headings the prompt
   asked for is no summary. It is then labelled by its opening line only:
   `error_message` (an API or server error as text), `refusal` (first-person "I can't /
   I'm unable to / I must decline"), `apology` (opens with "I'm sorry", "I apologize",
   "Unfortunately"), else `no_sections`.
A summary with at least one heading is never a refusal or an error, whatever it quotes:
"the agent hit `Error: file not found` and fixed the path" is history, not an answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from app.core.errors import SummarizerError
from app.core.ports import SummaryTemplate
from app.core.prompt import ARCHIVED_HEADINGS, DIMENSIONS

# Reasons of content checks (this module) and of the adapters' transport failures.
CONTENT_FAILURES = (
    "empty",
    "truncated",
    "refusal",
    "apology",
    "error_message",
    "filtered",
    "oversized",
    "no_sections",
)
TRANSPORT_FAILURES = (
    "timeout",  # one attempt past the summary timeout
    "deadline",  # all attempts together past the summary deadline
    "connection",
    "rate_limited",  # 429
    "server_error",  # 5xx, 408, 409
    "client_error",  # any other 4xx
    "bad_response",  # a 200 that is not a completion
)
SUMMARY_FAILURES = CONTENT_FAILURES + TRANSPORT_FAILURES

# A token is rarely longer than this many characters (cl100k's longest are runs of spaces
# or repeated punctuation); a text longer than cap × this is over the cap without counting.
MAX_CHARS_PER_TOKEN = 32
# Truncation stop reasons of the providers: OpenAI-compatible `finish_reason`, Anthropic's
# `stop_reason`; a refusal stop (Anthropic) and a content filter (OpenAI).
_STOP_FAILURES = {
    "length": ("truncated", "summary cut off at max_tokens"),
    "max_tokens": ("truncated", "summary cut off at max_tokens"),
    "model_context_window_exceeded": ("truncated", "summary cut off at the context window"),
    "refusal": ("refusal", "the model refused to summarize"),
    "content_filter": ("filtered", "the summary was filtered by the server"),
}


def stop_failure(stop_reason: object) -> SummarizerError | None:
    """The failure a provider's stop reason means, if any (not retryable: the same input
    stops the same way)."""
    found = _STOP_FAILURES.get(stop_reason) if isinstance(stop_reason, str) else None
    if found is None:
        return None
    reason, message = found
    return SummarizerError(message, retryable=False, reason=reason)


def _heading_key(title: str) -> str:
    """`Goals & Decisions` → `goals`, `🏗️ Technical Context (Static)` → `technical context`."""
    words = re.sub(r"^[^A-Za-z]+", "", title)
    return re.split(r"\s*[&(]", words, maxsplit=1)[0].strip().lower()


HEADING_KEYS: dict[SummaryTemplate, tuple[str, ...]] = {
    "sections": tuple(_heading_key(title) for title, _ in DIMENSIONS),
    "archived": tuple(_heading_key(h.lstrip("#").strip()) for h in ARCHIVED_HEADINGS),
}

# A heading line: markdown heading, bold, a numbered or bulleted title, or `Title:`.
_DECORATED = re.compile(r"^\s*(?:#{1,6}|\*\*|__|\d{1,2}[.)]|[-*]\s+\*\*)")
_LEAD = re.compile(r"^[^A-Za-z]+")

_APOLOGY = (
    r"(?:i(?:'|’)?m\s+(?:so\s+|very\s+|really\s+)?sorry|i\s+am\s+(?:so\s+|very\s+)?sorry|sorry"
    r"|i\s+apologi[sz]e|my\s+apologies|apologies|unfortunately|regrettably)"
)
_INABILITY = (
    r"(?:can(?:'|’)?t|cannot|can\s+not|won(?:'|’)t|will\s+not|could\s+not|couldn(?:'|’)?t"
    r"|(?:am\s+|(?:'|’)m\s+)?(?:unable|not\s+able)\s+to|must\s+(?:respectfully\s+)?decline"
    r"|(?:have|need)\s+to\s+decline|(?:'|’)m\s+not\s+going\s+to|am\s+not\s+going\s+to"
    r"|do\s+not\s+feel\s+comfortable|don(?:'|’)t\s+feel\s+comfortable)"
)
# First person, within the opening sentence: "I can't", "I'm unable to", "I'm afraid I
# can't", "As an AI language model, I cannot", "I'm just a language model, so I can't".
_REFUSAL = re.compile(
    rf"^(?:{_APOLOGY}[,.!]?\s*(?:but\s+)?)?"
    r"(?:[^.!?\n]{0,80}?[,;]\s*(?:so\s+|but\s+)?)?"
    rf"(?:i\s*(?:(?:'|’)m|\s+am)?\s*(?:afraid\s+(?:that\s+)?i\s+)?(?:really\s+|simply\s+)?{_INABILITY}"
    r"|this\s+(?:request|conversation|content)\s+(?:violates|goes\s+against|cannot))",
    re.IGNORECASE,
)
_APOLOGY_OPENING = re.compile(rf"^{_APOLOGY}\b", re.IGNORECASE)
_ERROR_OPENING = re.compile(
    r"^(?:"
    r"error\b\s*(?:[:\-\d(]|code)"  # Error: ..., ERROR 404, error(500), error code
    r"|\{\s*\"(?:error|detail|object\"\s*:\s*\"error)"  # a JSON error body as text
    r"|<(?:!doctype|html)"  # a gateway's HTML page
    r"|traceback\s+\(most\s+recent\s+call\s+last\)"
    r"|(?:internal\s+server\s+error|bad\s+gateway|service\s+unavailable|gateway\s+time-?out"
    r"|too\s+many\s+requests|rate\s+limit(?:ed)?\b|quota\s+exceeded|insufficient\s+quota"
    r"|an?\s+(?:unexpected\s+)?error\s+(?:has\s+)?occurred|something\s+went\s+wrong"
    r"|request\s+failed|failed\s+to\s+(?:generate|process|load)|invalid\s+api\s+key"
    r"|(?:the\s+)?model\s+\S+\s+(?:does\s+not\s+exist|not\s+found|is\s+not\s+available))"
    r")",
    re.IGNORECASE,
)


def has_heading(text: str, template: SummaryTemplate) -> bool:
    """Whether a line of `text` is one of the headings the prompt of `template` asked for,
    as a markdown heading, in bold, numbered, or as `Title:` (case and emoji ignored)."""
    keys = HEADING_KEYS[template]
    for line in text.splitlines():
        rest = _LEAD.sub("", line).lower()
        if not rest.startswith(keys):
            continue
        if _DECORATED.match(line) or line.rstrip().endswith(":"):
            return True
    return False


def opening(text: str) -> str:
    """The first non-empty line without leading markdown (`#`, `*`, `>`, quotes), at most
    300 characters: where a refusal, an apology or an error shows itself."""
    for line in text.splitlines():
        stripped = line.strip().lstrip("#*>_`\"' \t").strip()
        if stripped:
            return stripped[:300]
    return ""


def label_non_summary(text: str) -> str:
    """What a text without any expected heading is: `error_message`, `refusal`, `apology`
    or `no_sections`, judged by its opening line only."""
    first = opening(text)
    if _ERROR_OPENING.match(first):
        return "error_message"
    if _REFUSAL.match(first):
        return "refusal"
    if _APOLOGY_OPENING.match(first):
        return "apology"
    return "no_sections"


_MESSAGES = {
    "empty": "empty summary",
    "error_message": "the answer is an error message, not a summary",
    "refusal": "the answer is a refusal, not a summary",
    "apology": "the answer is an apology, not a summary",
    "no_sections": "the answer has none of the section headings the prompt asked for",
}


def check_summary(
    text: str,
    *,
    template: SummaryTemplate,
    cap_tokens: int,
    count: Callable[[str], int],
) -> SummarizerError | None:
    """None when `text` may be used as the summary, else the failure (never raised here).
    `count` is the tokenizer's; it is called only on a text that could be under the cap."""
    stripped = text.strip()
    if not stripped:
        return SummarizerError(_MESSAGES["empty"], retryable=False, reason="empty")
    if len(stripped) > cap_tokens * MAX_CHARS_PER_TOKEN or count(stripped) > cap_tokens:
        return SummarizerError(
            f"summary over {cap_tokens} tokens", retryable=False, reason="oversized"
        )
    if has_heading(stripped, template):
        return None
    reason = label_non_summary(stripped)
    return SummarizerError(_MESSAGES[reason], retryable=False, reason=reason)


def known_reason(reason: str | None, vocabulary: Sequence[str] = SUMMARY_FAILURES) -> str:
    """A metrics label: the reason when it is in the vocabulary, else `other` (a fake or
    a future adapter must not create a series per message)."""
    return reason if reason is not None and reason in vocabulary else "other"
