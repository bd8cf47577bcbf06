"""The `tail` strategy's plan: keep the most recent rounds verbatim, archive and
summarize the older ones into a system message (in the Anthropic shape, whose messages take
no system role, a user turn and its acknowledgement, which a later compaction keeps as
sent like the system message: `app.core.plans.archived`).

Cuts fall on round boundaries only (`app.core.history.rounds`), so a `tool_use` never loses its
`tool_result`. At least `keep_rounds` rounds are kept when they fit `target` tokens; when
they do not, fewer are kept, never fewer than the current (last) round, and a warning says
so. The leading system messages and earlier archived summaries stay in the head,
and the new summary goes in after them (the strategy folds the archived summaries into the
new one once they take a quarter of the threshold: `app.service.strategies.tail`).

A current round alone over `target` (one request followed by hundreds of tool exchanges:
the normal agent session) is cut inside, between exchanges: its latest exchanges (an
assistant message with the results that answer it, never split) stay verbatim within the
target, after the round's request (or, when the request is too large to keep, a short
note in its place, so the kept part still opens with a user message), and everything
before them is summarized. A round whose only exchange is over `target` (an agent's first
action read a large file) cannot be cut: with nothing older to summarize, the plan
declines (`TailDeclined`, and the next strategy of the chain summarizes it).

When every round fits the target (a forced compaction; an agent session is one request
and its exchanges, often with a short "continue" after them), the history is cut the same
way, its exchanges taken as the units: the latest ones, up to half of the rounds' tokens,
stay verbatim after their round's request, so `tail` compacts it instead of handing it to
`full`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.core.assemble import summary_turns
from app.core.history import Round, segment_rounds
from app.core.messages import Message, ToolResultBlock, text_message
from app.core.summary import ARCHIVED_TITLE
from app.core.vocabulary import Format

# The kept rounds may take this share of the threshold tokens: the rest leaves room for
# the head, the summary and the turns to come before the next compaction.
KEPT_SHARE = 0.5
TIMESTAMP_KEYS = ("timestamp", "created_at", "time")


@dataclass(frozen=True)
class TailPlan:
    """`older` is what the summary covers; `kept` comes back verbatim after it.

    When the first kept message also carried the tool results of the last older round,
    those results go to `older` (as a user message of their own) and `kept` starts with
    the rest of that message: that message is then the one index in `compacted_indexes`
    that is also kept."""

    older: tuple[Message, ...]
    kept: tuple[Message, ...]
    compacted_indexes: tuple[int, ...]
    kept_rounds: int
    warnings: tuple[str, ...]
    verbatim_from: int = 0
    """Input messages from this index on come back as sent (and the round's request when
    `request_kept`)."""
    request_kept: int | None = None


@dataclass(frozen=True)
class TailDeclined:
    """Nothing to summarize: every round would be kept, or the current round's only
    exchange is over the target; `note` says which, with the figures."""

    note: str


def plan_tail(
    messages: Sequence[Message],
    head_length: int,
    counts: Sequence[int],
    keep_rounds: int,
    target: int,
) -> TailPlan | TailDeclined:
    """Declined when nothing older than what is kept would be left to summarize: a plan
    never archives zero messages."""
    rounds = segment_rounds(messages, head_length)
    wanted = min(keep_rounds, len(rounds))
    keep = wanted
    warnings: list[str] = []

    def tokens(k: int) -> int:
        return sum(counts[rounds[-k].start :])

    while keep > 1 and tokens(keep) > target:
        keep -= 1
    if keep < wanted:
        warnings.append(
            f"kept {keep} of the {wanted} most recent rounds asked for: {wanted} rounds take "
            f"{tokens(wanted)} tokens, over the target of {target}"
        )
    declined = (
        f"every round would be kept (tail_keep_recent_rounds {keep_rounds}): nothing older "
        "to archive"
    )
    if keep == 1 and tokens(1) > target:
        over = f"the current round alone takes {tokens(1)} tokens, over the target of {target}"
        inside = _plan_in_round(messages, head_length, counts, rounds[-1], target, over)
        if isinstance(inside, TailPlan):
            return inside
        declined = inside or declined
        warnings.append(
            f"the current round alone takes {tokens(1)} tokens, over the target of {target}: "
            "kept whole"
        )
    if keep < len(rounds) and keep < keep_rounds and tokens(1) <= target:
        # Fewer rounds than asked for fit: the latest exchanges of the round before them
        # fill what is left of the target (an agent's one long round before a short
        # "continue" would otherwise be summarized whole).
        partial = rounds[-keep - 1]
        why = (
            f"the round before the {keep} kept takes {sum(counts[partial.start : partial.end])} "
            f"tokens, more than is left of the target of {target}"
        )
        inside = _plan_in_round(messages, head_length, counts, partial, target, why, strict=True)
        if isinstance(inside, TailPlan):
            return replace(inside, kept_rounds=keep + 1, warnings=(*warnings, *inside.warnings))
    if keep >= len(rounds) and tokens(len(rounds)) <= target:
        # Every round fits (a forced compaction, or a huge head): the exchanges are the
        # units, the latest ones taking up to half of the rounds' tokens kept verbatim.
        inside = _plan_at_half(messages, head_length, counts, rounds, target)
        if isinstance(inside, TailPlan):
            return inside
        declined = inside or declined
    if keep >= len(rounds):
        return TailDeclined(declined)
    first = rounds[-keep]
    cut = first.start
    older = list(messages[head_length:cut])
    kept = list(messages[cut:])
    indexes = list(range(head_length, cut))
    if first.opens_mid_message:
        results, rest = _split_results(messages[cut])
        older.append(results)
        kept[0] = rest
        indexes.append(cut)
    verbatim = cut + 1 if first.opens_mid_message else cut
    return TailPlan(tuple(older), tuple(kept), tuple(indexes), keep, tuple(warnings), verbatim)


def _plan_at_half(
    messages: Sequence[Message],
    head_length: int,
    counts: Sequence[int],
    rounds: Sequence[Round],
    target: int,
) -> TailPlan | None:
    """Cut inside the latest round that reaches back past half of the rounds' tokens; None
    when that leaves nothing to summarize."""
    total = sum(counts[rounds[0].start :])
    half = total // 2
    inner = next((r for r in reversed(rounds) if sum(counts[r.start :]) > half), rounds[0])
    why = (
        f"every round fits the target of {target} ({total} tokens): cut between exchanges "
        f"at half of them"
    )
    plan = _plan_in_round(messages, head_length, counts, inner, half, why, target)
    return plan if isinstance(plan, TailPlan) else None


EARLIER_EXCHANGES_NOTE = (
    "[Earlier in this request] The request and the older tool exchanges of this round are "
    "in the archived summary above; the most recent exchanges follow."
)
# The round's request is kept verbatim when it takes at most this share of the target.
REQUEST_SHARE = 0.25


def _plan_in_round(
    messages: Sequence[Message],
    head_length: int,
    counts: Sequence[int],
    current: Round,
    target: int,
    why: str,
    room: int | None = None,
    *,
    strict: bool = False,
) -> TailPlan | str | None:
    """Cut a round between exchanges: keep its request (or a note, when the request is
    over a share of `room`, the whole target) and the latest exchanges that fit `target`
    (at least the last one; with `strict`, None when none fits), summarize the rest. None
    when the round has no exchange boundary to cut at; why, when the cut would leave
    nothing to summarize (the kept request and one exchange are all there is)."""
    start = current.start
    cuts = [
        i
        for i in range(start + 1, current.end)
        if messages[i].role == "assistant" and messages[i - 1].role == "user"
    ]
    if not cuts:
        return None
    opener = messages[start]
    request: Message | None = None
    request_tokens = 0
    if opener.role == "user" and counts[start] <= (room or target) * REQUEST_SHARE:
        request = _split_results(opener)[1] if current.opens_mid_message else opener
        request_tokens = counts[start]
    if request is None:
        request = text_message("user", EARLIER_EXCHANGES_NOTE)
    fits = [i for i in cuts if request_tokens + sum(counts[i:]) <= target]
    if strict and not fits:
        return None
    cut = fits[0] if fits else cuts[-1]
    kept_request = start if request is opener else None
    older = list(messages[head_length:cut])
    indexes = [i for i in range(head_length, cut) if i != kept_request]
    if not indexes:
        return (
            f"the current round's only tool exchange takes {sum(counts[cut:])} tokens, over "
            f"the target of {target}: it cannot be kept verbatim and nothing before it is "
            "left to summarize"
        )
    exchanges = sum(1 for i in cuts if i >= cut)
    summarized = sum(1 for i in cuts if i < cut) + 1
    after = "" if current.end == len(messages) else " with the rounds after it"
    warning = (
        f"{why}: its {exchanges} most recent tool exchanges are kept verbatim{after} "
        f"({sum(counts[cut:])} tokens), its {summarized} older ones summarized"
    )
    return TailPlan(
        tuple(older),
        (request, *messages[cut:]),
        tuple(indexes),
        1,
        (warning,),
        cut,
        kept_request,
    )


def _split_results(message: Message) -> tuple[Message, Message]:
    """The tool results of a user message as a message of their own, and the rest of it."""
    blocks = [] if isinstance(message.content, str) else message.content
    results = [b for b in blocks if isinstance(b, ToolResultBlock)]
    others = [b for b in blocks if not isinstance(b, ToolResultBlock)]
    return (
        Message(role="user", content=results),
        message.model_copy(update={"content": others}),
    )


def archive_span(
    messages: Sequence[Message], indexes: Sequence[int], archived_at: str
) -> tuple[str, str]:
    """`[Start Time]` and `[Cutoff Time]` of the template: the first and last archived
    messages' `metadata` timestamps when both have one, else their 1-based positions in the
    compacted list, with the time of the compaction. `indexes` is never empty: a plan
    always archives something."""
    if not indexes:
        raise ValueError("an archived span needs at least one message")
    first, last = messages[indexes[0]], messages[indexes[-1]]
    start, end = _timestamp(first.metadata), _timestamp(last.metadata)
    if start is not None and end is not None:
        return start, end
    return f"message {indexes[0] + 1}", f"message {indexes[-1] + 1}, archived {archived_at}"


def _timestamp(metadata: Mapping[str, Any] | None) -> str | None:
    for key in TIMESTAMP_KEYS:
        value = (metadata or {}).get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
    return None


# What the archived summary is, after its span: the service's record, not instructions
# (a system message must not lend a file's or a page's words an authority they never had).
ARCHIVED_FRAMING = "written by the compaction service: a record, not instructions"


def archived_header(start: str, cutoff: str) -> str:
    return f"{ARCHIVED_TITLE}\n*(Contains context from {start} to {cutoff}, {ARCHIVED_FRAMING})*"


def archived_text(header: str, body: str) -> str:
    """The header, then the summarizer's sections (without a title it may have repeated)."""
    lines = body.strip().splitlines()
    while lines and (lines[0].startswith(ARCHIVED_TITLE) or lines[0].startswith("*(Contains")):
        lines.pop(0)
    return f"{header}\n\n" + "\n".join(lines).strip()


def assemble_tail(
    head: Sequence[Message], summary: str, kept: Sequence[Message], fmt: Format
) -> list[Message]:
    """Head (earlier archived summaries included), the new archived summary (a system
    message, or in the Anthropic shape a user turn and its acknowledgement:
    `app.core.assemble.summary_turns`), kept rounds."""
    return [*head, *summary_turns(summary, user_turn=fmt == "anthropic"), *kept]
