"""Is a well-formed answer about this conversation? The rules after the form checks of
`app.core.gate.check`, judged against what the service knows of the history.

In order (the first that fails names the reason):
1. `copy`: lines in the transcript's or the notes' own form (`user:` / `assistant:` lines,
   `<notes>` tags), or most of the answer aligned with the transcript (`alignment`).
2. `incomplete`: the answer stops mid-sentence, whatever the provider's stop reason.
3. `placeholder`: the template filled with bracketed descriptions.
4. `incoherent`: the conversation's words in no order, and not written in sentences
   (a prose summary of prose documents pairs its words as often as a shuffle does).
5. `foreign`: too much of it names what the history does not hold; else such sentences,
   and requests or next steps only a tool result states, are dropped with a warning
   (`app.core.gate.grounding`).
6. `missing_sections` / `says_nothing`: after that, the required sections state something of
   the conversation, or a plain "none" that the history does not contradict (no "no
   files" when files were touched, no "no tool calls" when tools ran); one terse section
   in `SILENT_PER` is let pass, a contradiction never.
7. `stale`: its goals and status leave out the user's latest request
   (`app.core.gate.ending`).
8. `uncovered`: the answer names too few of the history's salient facts
   (`app.core.gate.coverage`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.assemble import SUMMARY_PREFIX
from app.core.errors import SummarizerError
from app.core.gate.alignment import PairIndex, copied_share
from app.core.gate.claims import Facts
from app.core.gate.coverage import Salient, salient
from app.core.gate.ending import last_targets, leaves_out, request_stems
from app.core.gate.entities import HistoryText
from app.core.gate.evidence import Evidence
from app.core.gate.grounding import ground, shown
from app.core.gate.overlap import words
from app.core.gate.sections import missing_sections, split_sections, terse_status, title_of
from app.core.gate.shape import (
    in_sentences,
    incomplete,
    is_none_statement,
    placeholders,
    says_something,
    shuffled,
)
from app.core.history import ExtractedFacts
from app.core.messages import Message, message_text
from app.core.ports import SummaryTemplate
from app.core.summary import Judged

# A copy: this share of the answer's words aligned with the transcript (less the user's
# requests quoted word for word), of at least `ALIGN_MIN_WORDS` words; a summary quoting
# commands and errors has a third at most.
ALIGNED_SHARE = 0.6
ALIGN_MIN_WORDS = 60
# The digest path's goals answer covers the history with one kind of its facts, or by
# naming this many of its entities (the request may be nowhere but in a harness's text).
LONE_ENTITIES = 2
PLACEHOLDERS = 2
# A refused answer's warning quotes this many of its false sentences.
SHOWN_FALSE = 3
# One section in this many may say nothing (a terse "Answered." status); a lone one may not.
SILENT_PER = 4
ROLE_LINES = 2
_ROLE_LINE = re.compile(
    r"^\s*(?:[-*>]\s*)?(?:\*\*|__)?(?:user|assistant|human|ai|system|tool)(?:\*\*|__)?\s*:",
    re.IGNORECASE,
)
_NOTES_TAG = re.compile(r"</?(?:notes|conversation|transcript)>", re.IGNORECASE)
_CLAUSES = re.compile(r"[;,]|\band\b|\bbut\b")
# Sections a "none" cannot answer when the history has facts of their kind.
_FACT_SECTIONS = {
    "file operations": "files", "tool calls": "tools", "file system state": "changes",
}  # fmt: skip


def _carried(messages: Sequence[Message]) -> str:
    """The text of the earlier summaries in `messages` (a chunk or compaction after one)."""
    return "\n".join(
        text
        for m in messages
        if m.role == "user" and (text := message_text(m)).startswith(SUMMARY_PREFIX.strip())
    )


@dataclass(frozen=True)
class Grounds:
    """What the history is, read once per request: its text by who said it, its salient
    facts, and the word pairs of its transcript and of the user's requests."""

    history: HistoryText
    salient: Salient
    transcript_pairs: PairIndex
    request_pairs: PairIndex
    vocabulary: frozenset[str]
    has_files: bool
    has_tools: bool
    has_changes: bool  # files created, edited or deleted
    tools: frozenset[str]  # the names of the tools called
    reported: frozenset[str]  # the words of the errors met
    claims: Facts  # the evidence the answer's claims are held to
    latest: frozenset[str]  # the words of the user's latest request (not the first)

    @classmethod
    def of(
        cls,
        messages: Sequence[Message],
        facts: ExtractedFacts,
        transcript: Sequence[str],
        requests: Sequence[str],
        instructions: frozenset[str],
        notes: str = "",
    ) -> Grounds:
        history = HistoryText.of(list(messages), notes)
        return cls(
            history,
            salient(facts, instructions, _carried(messages)),
            PairIndex.of(transcript),
            PairIndex.of(requests),
            frozenset(transcript),
            any(paths for _, paths in facts.files()),
            bool(facts.tool_counts),
            bool(facts.files_created or facts.files_edited or facts.files_deleted),
            frozenset(name.lower() for name, _ in facts.tool_counts),
            frozenset(w for note in facts.errors for w in words(note.message)),
            Facts.of(Evidence.of(messages), history),
            request_stems(facts.latest_request, instructions, facts.first_request),
        )


def _failure(reason: str, message: str) -> SummarizerError:
    return SummarizerError(message, retryable=False, reason=reason)


def judge_truth(
    text: str,
    template: SummaryTemplate,
    grounds: Grounds,
    instructions: frozenset[str],
    required: Sequence[str] | None = None,
) -> Judged | SummarizerError:
    """`text` (already through the form checks) with its ungrounded sentences dropped, or
    the failure. `required`: the titles that must be there (all by default); a single
    required section (a digest answer) need not cover the history alone."""
    failure = _form_failure(text, grounds)
    if failure is not None:
        return failure
    grounded = ground(text, template, grounds.history, grounds.reported, grounds.claims)
    if grounded.rejected:
        if grounded.reason == "misleading":
            # each false sentence with its rule, as a trimmed answer's warnings say them
            named = "; ".join(
                f"[{rule}] “{shown(sentence)}”" for rule, sentence in grounded.false[:SHOWN_FALSE]
            )
            more = len(grounded.false) - SHOWN_FALSE
            named += f"; and {more} more" if more > 0 else ""
            return _failure("misleading", f"most of the answer's claims are false: {named}")
        names = ", ".join(f"`{n}`" for n in grounded.foreign[:3]) or "requests from tool results"
        return _failure(
            "foreign", f"the answer states what the conversation does not hold: {names}"
        )
    kept = grounded.text
    sections = split_sections(kept, template)
    missing = missing_sections(sections, template, required)
    if missing:
        return _failure("missing_sections", f"the answer lacks the sections: {', '.join(missing)}")
    wanted = [s for s in sections if required is None or title_of(s.key, template) in required]
    silent = [
        title_of(s.key, template)
        for s in wanted
        if not _states(s.key, s.body, grounds, instructions)
    ]
    denied = [title_of(s.key, template) for s in wanted if _denies(s.key, s.body, grounds)]
    if denied or len(silent) > len(wanted) // SILENT_PER:
        named = ", ".join(denied or silent)
        return _failure("says_nothing", f"sections that say nothing of the conversation: {named}")
    lone = required is not None and len(required) == 1
    if not lone and leaves_out(sections, grounds.latest, last_targets(grounds.claims.evidence)):
        return _failure(
            "stale", "the answer's goals and status leave out the user's latest request"
        )
    if not lone or _asks_coverage(required or (), template):
        need = 1 if lone else grounds.salient.required()
        hits = grounds.salient.covered(kept)
        if lone and grounded.stated - len(grounded.foreign) >= LONE_ENTITIES:
            hits = max(hits, 1)  # one sentence naming what the history names
        if grounds.salient.groups() and hits < need:
            return _failure(
                "uncovered",
                f"the answer names {hits} of the {need} kinds of this conversation's facts "
                "it must (its requests, files, commands, errors)",
            )
    return Judged(kept, grounded.warnings)


def _asks_coverage(required: Sequence[str], template: SummaryTemplate) -> bool:
    """A lone answer covers the history when it is the goals' (the digest path's first)."""
    return template == "digest" and required[0].lower().startswith("goals")


def _form_failure(text: str, grounds: Grounds) -> SummarizerError | None:
    lines = text.splitlines()
    if sum(1 for ln in lines if _ROLE_LINE.match(ln)) >= ROLE_LINES or _NOTES_TAG.search(text):
        return _failure("copy", "the answer copies the conversation instead of summarizing it")
    tokens = words(text)
    distinct = words("\n".join(dict.fromkeys(lines)))  # a line repeated is copied once
    if len(distinct) >= ALIGN_MIN_WORDS:
        share = copied_share(distinct, grounds.transcript_pairs, grounds.request_pairs)
        if share >= ALIGNED_SHARE:
            return _failure("copy", "the answer copies the conversation instead of summarizing it")
    if incomplete(text):
        return _failure("incomplete", "the answer stops mid-sentence")
    # A bracketed fragment the history has (a list comprehension in a command the summary
    # lists) is quoted, not a template's blank.
    blanks = [p for p in placeholders(text) if not grounds.history.quotes(p)]
    if len(blanks) >= PLACEHOLDERS:
        return _failure("placeholder", "the answer is a template with placeholders")
    if shuffled(tokens, grounds.vocabulary, grounds.transcript_pairs) and not in_sentences(text):
        return _failure("incoherent", "the answer is the conversation's words in no order")
    return None


def _denies(key: str, body: str, grounds: Grounds) -> bool:
    """A "none" where the history has facts of the section's kind (no files, no tools). A
    body that says what was there before what was not ("two documents were read; nothing
    was written") denies nothing: each of its clauses must say none."""
    kind = _FACT_SECTIONS.get(key)
    if kind is None or not is_none_statement(body):
        return False
    if not all(is_none_statement(c) for c in _CLAUSES.split(body) if words(c)):
        return False
    return {"files": grounds.has_files, "tools": grounds.has_tools}.get(kind, grounds.has_changes)


def _states(key: str, body: str, grounds: Grounds, instructions: frozenset[str]) -> bool:
    """Whether a section's body states something (the template's own notes left out)."""
    if key == "task status" and terse_status(body):
        return True  # "Done.": the state of a finished task, said in a word
    body = "\n".join(line for line in body.splitlines() if not set(words(line)) <= instructions)
    if _denies(key, body, grounds):
        return False
    if grounds.tools & set(words(body)):
        return True  # names a tool the agent called (`ls`, `submit`)
    return says_something(body, grounds.history, instructions)
