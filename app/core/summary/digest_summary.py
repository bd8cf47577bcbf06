"""The digest path's summary: the model's answers in the five sections of the template,
with the facts the service knows for certain written in by the service.

A small model paraphrases the user's requests ("Identify where the data is stored") and
names only some of the files, so a summary of its prose alone loses what the next turn
most needs: what the user asked, in the user's words, and which files were touched. The
service writes the first and the latest request (quoted, their first `REQUEST_WORDS`
words) at the head of Goals & Decisions, and the whole File Operations, Tool Calls and
Errors sections (`app.core.summary.digest.service_sections`); the model's answers fill Goals &
Decisions and Task Status. Each answer was accepted by the summary check on its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from app.core.history import ExtractedFacts, cut_words
from app.core.messages import Message
from app.core.summary.digest import service_sections
from app.core.summary.prompt import DIMENSIONS

_LIST_MARK = re.compile(r"^(?:[-*+]|\d{1,2}[.)])\s")
# Words of a request quoted in the summary (the first words say what was asked).
REQUEST_WORDS = 60


def digest_summary(
    answers: Mapping[str, str], messages: Sequence[Message], facts: ExtractedFacts
) -> str:
    """The summary of the digest path from the model's `answers` (by section title): the
    five sections of the template (`DIMENSIONS`), in its order."""
    service = service_sections(messages, facts)
    parts = []
    for title, _ in DIMENSIONS:
        if title in service:
            parts.append(service[title])
            continue
        heads = request_lines(facts) if title == DIMENSIONS[0][0] else []
        body = "\n".join([*heads, _item(answers.get(title, ""))]).strip() or "- None."
        parts.append(f"## {title}\n{body}")
    return "\n\n".join(parts)


def request_lines(facts: ExtractedFacts) -> list[str]:
    """The user's first and latest requests, quoted."""
    said = (("First request", facts.first_request), ("Latest request", facts.latest_request))
    quoted = [(label, cut_words(text, REQUEST_WORDS)) for label, text in said if text]
    return [f'- {label}: "{words}"' for label, words in quoted if words]


def _item(answer: str) -> str:
    """An answer as a list item, unless the model wrote a list."""
    text = answer.strip()
    return text if not text or _LIST_MARK.match(text) else f"- {text}"
