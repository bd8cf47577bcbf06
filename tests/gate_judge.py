"""The summary gate as the service runs it on each path, in-process: the requests the
service builds for a session (the five-section prompt, the tail's archive template, the
digest path's two questions), each answer judged by `CheckedSummarizer`."""

from __future__ import annotations

from functools import cache

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.errors import SummarizerError
from app.core.options.params import SummaryParams
from app.core.ports import SummaryRequest, SummaryTemplate
from app.core.summary import (
    SUMMARY_SYSTEM,
    build_archived_prompt,
    build_summary_prompt,
    serialize_for_summary,
)
from app.service.checked import CheckedSummarizer
from app.service.digested import digest_requests
from tests.builders import FakeSummarizer
from tests.gate_answers import Answer
from tests.gate_sessions import BY_NAME

TEMPLATES: tuple[SummaryTemplate, ...] = ("sections", "archived", "digest")
TOKENIZER = TiktokenTokenizer()
CHECKER = CheckedSummarizer(FakeSummarizer(), cap_tokens=8000, count=TOKENIZER.count)


@cache
def requests(session: str, template: SummaryTemplate) -> tuple[SummaryRequest, ...]:
    messages = BY_NAME[session].messages
    if template == "digest":
        params = SummaryParams(
            max_summary_words=1200, summary_input_budget=100_000, ledger_budget=2000
        )
        return digest_requests(messages, params, None, TOKENIZER)[1]
    build = build_archived_prompt if template == "archived" else build_summary_prompt
    prompt = build(serialize_for_summary(messages), 1200, None)
    return (
        SummaryRequest(
            messages=tuple(messages),
            system=SUMMARY_SYSTEM,
            prompt=prompt,
            max_words=1200,
            template=template,
        ),
    )


def verdict(answer: Answer, template: SummaryTemplate) -> str:
    """`accepted`, or the reason of the first rejected call."""
    texts = {"sections": [answer.sections], "archived": [answer.archived]}.get(
        template, list(answer.digest)
    )
    for request, text in zip(requests(answer.session, template), texts, strict=True):
        judged = CHECKER._judge(text, request)
        if isinstance(judged, SummarizerError):
            return judged.reason or "rejected"
    return "accepted"
