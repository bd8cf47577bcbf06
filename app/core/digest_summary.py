"""The digest path's summary: the model's narrative inside the five sections, with the
facts the service knows for certain written in by the service.

A small model paraphrases the user's requests ("Identify where the data is stored") and
names only some of the files, so a summary of its prose alone loses what the next turn
most needs: what the user asked, in the user's words, and which files were touched. The
service writes those lines itself from the history's facts — the first and the latest
request (quoted and cut as the extractive summary does) at the head of Goals & Decisions,
the files at the head of File Operations — and the whole Tool Calls and Errors sections
(`app.core.digest.service_sections`). The model's bullets follow the service's lines in
each section, in the template's order; anything it wrote before its first heading stays
first. The answer was already accepted by the summary check, on the model's text alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.digest import service_sections
from app.core.facts import ExtractedFacts
from app.core.messages import Message
from app.core.prompt import DIMENSIONS
from app.core.summary_sections import heading_of, split_sections

# Words of a request quoted in the summary (the first words say what was asked).
REQUEST_WORDS = 60
# Paths of each kind listed under File Operations, the latest kept.
FILES_PER_KIND = 12


def digest_summary(answer: str, messages: Sequence[Message], facts: ExtractedFacts) -> str:
    """The summary of the digest path: `answer`'s sections with the service's lines, in the
    five sections of the template (`DIMENSIONS`), then nothing else."""
    bodies = {s.key: s.body.strip() for s in split_sections(answer, "digest")}
    service = service_sections(messages, facts)
    heads = {
        "Goals & Decisions": request_lines(facts),
        "File Operations": file_lines(facts),
    }
    parts = [_before_first_heading(answer)]
    for title, _ in DIMENSIONS:
        if title in service:
            parts.append(service[title])
            continue
        lines = [*heads.get(title, []), bodies.get(_key(title), "")]
        body = "\n".join(line for line in lines if line) or "- None."
        parts.append(f"## {title}\n{body}")
    return "\n\n".join(part for part in parts if part)


def request_lines(facts: ExtractedFacts) -> list[str]:
    """The user's first and latest requests, quoted."""
    said = (("First request", facts.first_request), ("Latest request", facts.latest_request))
    return [f'- {label}: "{_cut(text)}"' for label, text in said if text and text.strip()]


def file_lines(facts: ExtractedFacts) -> list[str]:
    """The files the history touched, by kind."""
    kinds = (
        ("Read", facts.files_read),
        ("Created", facts.files_created),
        ("Edited", facts.files_edited),
        ("Deleted", facts.files_deleted),
    )
    return [
        f"- {kind}: " + ", ".join(f"`{p}`" for p in paths[-FILES_PER_KIND:])
        for kind, paths in kinds
        if paths
    ]


def _cut(text: str) -> str:
    words = text.split()
    return " ".join(words[:REQUEST_WORDS]) + (" …" if len(words) > REQUEST_WORDS else "")


def _key(title: str) -> str:
    return heading_of(f"## {title}", "digest") or ""


def _before_first_heading(answer: str) -> str:
    lines: list[str] = []
    for line in answer.splitlines():
        if heading_of(line, "digest") is not None:
            break
        lines.append(line)
    return "\n".join(lines).strip()
