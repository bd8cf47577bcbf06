"""Is this text a summary? The rules, in one place, that every LLM summary passes before
the service uses it; the reasons they name are `app.core.summary.reasons`.

An LLM that answers 200 does not always answer with a summary: a refusal, an apology or a
provider's error as text (in any language its users write), its reasoning without an
answer, a chat-template leak, the prompt or the conversation echoed back, filler under the
right headings, one word repeated, a summary cut off or running to megabytes. Stored as
the summary, any of these replaces the agent's history. Each is a `SummarizerError` with a
reason here, so the configured fallback runs or the messages come back unchanged. What a
summary is gets decided on its content, measured against what it was asked about (the
prompt's instructions and the transcript, `SummarySource`).

Order of the checks (the first that fails names the reason):
1. `truncated` / `refusal` / `filtered` / `tool_calls`: the provider said so (`stop_failure`
   and the adapters, which see the response).
2. `empty`: nothing but whitespace or invisible characters.
3. `oversized`: more than `cap_tokens` tokens (a text longer than `MAX_CHARS_PER_TOKEN`
   characters a token over the cap is oversized without being counted).
4. Cleaning (`app.core.gate.answer_clean`): reasoning blocks and template tokens go;
   `reasoning_only` when nothing but reasoning (or an unclosed block) is left.
5. `refusal` / `apology` / `error_message`: a sentence anywhere that refuses, apologizes or
   reports a failing provider (`app.core.gate.refusals`), unless the conversation holds those
   words (the summary quotes its history), or that opens an answer without any heading.
6. `echo`: most of the answer's word runs come from the prompt's instructions (or from
   instructions and transcript together: the whole prompt), or, reworded or misspelt,
   many of its words are the instructions' alone; `copy`: its runs come from the
   transcript alone (`app.core.gate.overlap`).
7. `repetitive`: a few words repeated (distinct words, or the text's zlib ratio).
8. `no_sections` (none of the template's headings), `missing_sections` (some of them),
   `empty_sections` (a heading without content, or fewer than
   `MIN_SUBSTANTIVE_SECTIONS` sections saying more than "none").
9. `filler`: the sections' words are not the conversation's (lorem ipsum, placeholder text).
10. `repetitive` again: one same text under `SAME_SECTIONS` headings or more.
11. Then, with the history's facts at hand, whether it is about this conversation
   (`app.core.gate.truth`: `copy`, `incomplete`, `placeholder`, `incoherent`, `foreign`,
   `says_nothing`, `uncovered`); its ungrounded sentences are dropped with a warning.
The cleaned (and trimmed) text is what is used as the summary.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from app.core.errors import SummarizerError
from app.core.gate.answer_clean import clean_answer
from app.core.gate.overlap import SHINGLE, Reference, shingles, words
from app.core.gate.refusals import Speech, label_opening, sentences, speech_in
from app.core.gate.sections import (
    MIN_SUBSTANTIVE_SECTIONS,
    missing_sections,
    split_sections,
    terse_status,
    title_of,
    without_title,
)
from app.core.gate.shape import is_none_statement
from app.core.gate.truth import Grounds, judge_truth
from app.core.history import extract_facts
from app.core.messages import is_tool_result_message, message_text
from app.core.ports import SummaryRequest, SummaryTemplate
from app.core.summary import (
    DIGEST_NOTES_END,
    Judged,
    build_archived_prompt,
    build_summary_prompt,
    serialize_for_summary,
)

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
    "tool_calls": ("tool_calls", "the model called a tool instead of summarizing"),
    "function_call": ("tool_calls", "the model called a tool instead of summarizing"),
    "tool_use": ("tool_calls", "the model called a tool instead of summarizing"),
    "pause_turn": ("truncated", "the model paused its turn before the summary ended"),
}


def stop_failure(stop_reason: object) -> SummarizerError | None:
    """The failure a provider's stop reason means, if any (not retryable: the same input
    stops the same way)."""
    found = _STOP_FAILURES.get(stop_reason) if isinstance(stop_reason, str) else None
    if found is None:
        return None
    reason, message = found
    return SummarizerError(message, retryable=False, reason=reason)


def signal_failure(signal: Literal["refusal", "tool_calls"]) -> SummarizerError:
    """The failure a field of the provider's answer means (OpenAI's `message.refusal`,
    a tool call in the message) whatever text comes with it."""
    reason, message = _STOP_FAILURES[signal]
    return SummarizerError(message, retryable=False, reason=reason)


@dataclass(frozen=True)
class SummarySource:
    """What the answer was asked about: the prompt's own words (system prompt, instructions,
    template, the caller's focus) and the transcript it was asked to summarize."""

    instructions: Reference
    transcript: Reference
    # The user's own requests: a summary may quote them whole (the prompt asks to keep
    # what the user said exactly), so quoting them is no copy.
    requests: Reference = field(default_factory=lambda: Reference(()))
    # The history's facts, by who said them (None: the truth rules are skipped).
    grounds: Grounds | None = None

    @classmethod
    def of(cls, instructions: str, transcript: str, requests: str = "") -> SummarySource:
        return cls(Reference.of(instructions), Reference.of(transcript), Reference.of(requests))


def source_of(request: SummaryRequest) -> SummarySource:
    """The source of `request`'s answer, rebuilt from its parts as the prompt was. On the
    digest path the prompt is the notes and a question: the notes are what the answer is
    about (a copy of them is a copy), the rest of the prompt its instructions."""
    requests = "\n\n".join(
        message_text(m)
        for m in request.messages
        if m.role == "user" and not is_tool_result_message(m)
    )
    transcript = serialize_for_summary(request.messages)
    notes = ""
    if request.template == "digest":
        notes, _, instructions = request.prompt.partition(DIGEST_NOTES_END)
        transcript = f"{transcript}\n{notes}"
    else:
        build = build_archived_prompt if request.template == "archived" else build_summary_prompt
        instructions = build("", request.max_words, request.instructions)
    source = SummarySource.of(f"{request.system}\n{instructions}", transcript, requests)
    facts = request.facts if request.facts is not None else extract_facts(request.messages)
    grounds = Grounds.of(
        request.messages,
        facts,
        source.transcript.tokens,
        source.requests.tokens,
        source.instructions.vocabulary,
        notes,
    )
    return replace(source, grounds=grounds)


# Echo: the share of the answer's word runs found in the instructions (or, with at least
# `ECHO_RUNS` of them, in the instructions and transcript together); copy: in the transcript.
ECHO_SHARE = 0.5
ECHO_RUNS = 8
# The whole prompt back with edits (a word changed here and there breaks runs): half the
# runs are the prompt's and some are the instructions' (no calibration summary holds
# `ECHO_RUNS` runs of the instructions; an LLM's summary shares a third of its runs at most).
PROMPT_SHARE = 0.5
# The instructions reworded or misspelt keep their vocabulary: an echo when this share of
# the answer's words (of at least `ECHO_MIN_WORDS`) are the instructions' and not the
# transcript's (a summary's words are the conversation's; the calibration's share 6% at most).
ECHO_WORDS = 0.4
ECHO_MIN_WORDS = 20
COPY_SHARE = 0.9
COPY_MIN_RUNS = 12
# Repetition: distinct words per word, and compressed bytes per byte, of a long enough text.
REPEAT_MIN_WORDS = 20
REPEAT_DISTINCT = 0.15
REPEAT_MIN_CHARS = 400
REPEAT_ZLIB = 0.08
# The same text under this many headings (of five) is repetitive.
SAME_SECTIONS = 3
# Filler: the share of the sections' content words that occur in the conversation.
GROUNDED_SHARE = 0.2
# Words of a refusal, apology or error looked up in the conversation to tell a quote from
# an answer; the share of an error sentence's words the conversation must hold to be a report.
QUOTE_WORDS = 9
ERROR_GROUNDED = 0.5
# The role headers and call lines of `serialize_for_summary`'s transcript, in any case,
# bare or quoted, listed or in bold: a header alone on its line, a call or result header
# at the start of one (a summary names a `[tool call …]` inside a sentence, not at its head).
_TRANSCRIPT_LINE = re.compile(
    r"^\s*(?:>\s*)?(?:[-*+]\s+)?(?:\*\*|__)?"
    r"(?:\[(?:user|assistant|system|tool)\](?:\*\*|__)?:?\s*$|\[tool (?:call \S+ id=|result id=))",
    re.IGNORECASE,
)
_INVISIBLE = re.compile(r"[\s\u00ad\u034f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]+")

_MESSAGES = {
    "empty": "empty summary",
    "reasoning_only": "the answer is reasoning without a summary",
    "error_message": "the answer is an error message, not a summary",
    "refusal": "the answer is a refusal, not a summary",
    "apology": "the answer is an apology, not a summary",
    "echo": "the answer repeats the prompt instead of summarizing",
    "copy": "the answer copies the conversation instead of summarizing it",
    "repetitive": "the answer repeats a few words",
    "no_sections": "the answer has none of the section headings the prompt asked for",
    "filler": "the sections do not talk about the conversation",
}


def _failure(reason: str, message: str | None = None) -> SummarizerError:
    return SummarizerError(message or _MESSAGES[reason], retryable=False, reason=reason)


def has_heading(text: str, template: SummaryTemplate) -> bool:
    """Whether a line of `text` is one of the headings the prompt of `template` asked for."""
    return bool(split_sections(text, template))


def opening(text: str) -> str:
    """The first non-empty line without leading markdown (`#`, `*`, `>`, quotes), at most
    300 characters: where a one-message answer shows what it is."""
    for line in text.splitlines():
        stripped = line.strip().lstrip("#*>_`\"' \t").strip()
        if stripped:
            return stripped[:300]
    return ""


def accept_summary(
    text: str,
    *,
    template: SummaryTemplate,
    cap_tokens: int,
    count: Callable[[str], int],
    source: SummarySource | None = None,
    sections: Sequence[str] | None = None,
) -> str | SummarizerError:
    """The text to use as the summary, or the failure (`judge_summary` without warnings)."""
    verdict = judge_summary(
        text, template=template, cap_tokens=cap_tokens, count=count, source=source,
        sections=sections,
    )  # fmt: skip
    return verdict if isinstance(verdict, SummarizerError) else verdict.text


def judge_summary(
    text: str,
    *,
    template: SummaryTemplate,
    cap_tokens: int,
    count: Callable[[str], int],
    source: SummarySource | None = None,
    sections: Sequence[str] | None = None,
) -> Judged | SummarizerError:
    """The text to use as the summary (`text` cleaned, its ungrounded sentences dropped)
    with its warnings, or the failure (never raised here). Without a `source` the rules
    that compare with the prompt and the conversation are skipped. `count` is the
    tokenizer's; it is called only on a text that could be under the cap. `sections`: the
    titles of `template` required (all of them by default)."""
    if not _INVISIBLE.sub("", text):
        return _failure("empty")
    if len(text.strip()) > cap_tokens * MAX_CHARS_PER_TOKEN:
        return _failure("oversized", f"summary over {cap_tokens} tokens")
    cleaned = clean_answer(text)
    if cleaned.reasoning_only:
        return _failure("reasoning_only")
    summary = cleaned.text
    if not _INVISIBLE.sub("", summary):
        return _failure("empty")
    if count(summary) > cap_tokens:
        return _failure("oversized", f"summary over {cap_tokens} tokens")
    failure = (
        _speech_failure(summary, template, source)
        or _echo_failure(summary, template, source)
        or _transcript_form_failure(summary)
        or _repetition_failure(_prose(summary, template))
        or _structure_failure(summary, template, sections)
        or _filler_failure(summary, template, source)
        or _same_sections_failure(summary, template)
    )
    if failure is not None:
        return failure
    if source is None or source.grounds is None:
        return Judged(summary)
    return judge_truth(summary, template, source.grounds, source.instructions.vocabulary, sections)


def check_summary(
    text: str,
    *,
    template: SummaryTemplate,
    cap_tokens: int,
    count: Callable[[str], int],
    source: SummarySource | None = None,
) -> SummarizerError | None:
    """None when `text` may be used as the summary (once cleaned), else the failure."""
    verdict = accept_summary(
        text, template=template, cap_tokens=cap_tokens, count=count, source=source
    )
    return verdict if isinstance(verdict, SummarizerError) else None


def _speech_failure(
    text: str, template: SummaryTemplate, source: SummarySource | None
) -> SummarizerError | None:
    for sentence in sentences(text):
        speech = speech_in(sentence)
        if speech is not None and not _quoted(speech, source):
            return _failure(speech.kind)
    if not has_heading(text, template):
        kind = label_opening(opening(text))
        return _failure(kind) if kind is not None else None
    return None


def _quoted(speech: Speech, source: SummarySource | None) -> bool:
    """Whether the conversation holds the words of `speech`: history, not an answer."""
    if source is None:
        return False
    if source.transcript.holds_phrase(words(speech.span)[:QUOTE_WORDS]):
        return True
    # an error reported in the summary's own words: most of its words are the conversation's
    share = source.transcript.grounding(words(speech.sentence))
    return speech.kind == "error_message" and share is not None and share >= ERROR_GROUNDED


def _prose(text: str, template: SummaryTemplate) -> str:
    """`text` without the template's heading titles (a `Title: text` line keeps its text)."""
    kept = (without_title(line, template) for line in text.splitlines())
    return "\n".join(line for line in kept if line is not None)


def _echo_failure(
    text: str, template: SummaryTemplate, source: SummarySource | None
) -> SummarizerError | None:
    tokens = words(_prose(text, template))
    runs = shingles(tokens)
    if source is None or len(runs) < SHINGLE:
        return None
    from_instructions = runs & source.instructions.runs
    from_prompt = from_instructions | (runs & source.transcript.runs)
    if (
        len(from_instructions) >= ECHO_SHARE * len(runs)
        or (len(from_prompt) >= PROMPT_SHARE * len(runs) and len(from_instructions) >= ECHO_RUNS)
        or _instruction_words(tokens, source) >= ECHO_WORDS
    ):
        return _failure("echo")
    own = runs - source.requests.runs
    if len(own) >= COPY_MIN_RUNS and source.transcript.containment(own) >= COPY_SHARE:
        return _failure("copy")
    return None


def _transcript_form_failure(text: str) -> SummarizerError | None:
    """A line in the transcript's own form (`[user]`, `[tool call …`): the model re-types
    the conversation, however little of it (a short answer escapes the overlap measure)."""
    if any(_TRANSCRIPT_LINE.match(line) for line in text.splitlines()):
        return _failure("copy")
    return None


def _instruction_words(tokens: list[str], source: SummarySource) -> float:
    """The share of `tokens` that are the instructions' words and not the transcript's."""
    if len(tokens) < ECHO_MIN_WORDS:
        return 0.0
    instructions, transcript = source.instructions.vocabulary, source.transcript.vocabulary
    return sum(1 for t in tokens if t in instructions and t not in transcript) / len(tokens)


def _repetition_failure(text: str) -> SummarizerError | None:
    tokens = words(text)
    if len(tokens) >= REPEAT_MIN_WORDS and len(set(tokens)) < REPEAT_DISTINCT * len(tokens):
        return _failure("repetitive")
    raw = text.encode("utf-8")
    if len(raw) >= REPEAT_MIN_CHARS and len(zlib.compress(raw, 9)) < REPEAT_ZLIB * len(raw):
        return _failure("repetitive")
    return None


def _structure_failure(
    text: str, template: SummaryTemplate, required: Sequence[str] | None = None
) -> SummarizerError | None:
    sections = split_sections(text, template)
    if not sections:
        return _failure("no_sections")
    missing = missing_sections(sections, template, required)
    if missing:
        return _failure("missing_sections", f"the answer lacks the sections: {', '.join(missing)}")
    empty = [title_of(s.key, template) for s in sections if not s.has_content()]
    if empty:
        return _failure("empty_sections", f"sections without content: {', '.join(empty)}")
    substantive = sum(1 for s in sections if s.is_substantive())
    if substantive < MIN_SUBSTANTIVE_SECTIONS:
        return _failure(
            "empty_sections",
            f"{substantive} of {len(sections)} sections say more than none "
            f"(at least {MIN_SUBSTANTIVE_SECTIONS} must)",
        )
    return None


def _filler_failure(
    text: str, template: SummaryTemplate, source: SummarySource | None
) -> SummarizerError | None:
    if source is None:
        return None
    # the prompt's own words (template labels) are evidence neither way, nor is a plain
    # "nothing here" ("Nothing further is pending."), nor a status in one word ("Erledigt.")
    bodies = [
        word
        for s in split_sections(text, template)
        if not is_none_statement(s.body) and not terse_status(s.body)
        for word in s.words
        if word not in source.instructions.vocabulary
    ]
    share = source.transcript.grounding(bodies)
    if share is not None and share < GROUNDED_SHARE:
        return _failure("filler")
    return None


def _same_sections_failure(text: str, template: SummaryTemplate) -> SummarizerError | None:
    """Sections say things of their own: one text under most headings is filler that
    happens to use the conversation's words (a fact stated twice is not)."""
    said = Counter(tuple(s.words) for s in split_sections(text, template) if s.is_substantive())
    if said and max(said.values()) >= SAME_SECTIONS:
        return _failure("repetitive", "the same text under several headings")
    return None
