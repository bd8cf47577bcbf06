"""Which facts the ledger keeps within its token budget.

Order of value (`PRIORITY`), recent before old within a kind, with two guards so that one
kind cannot take the whole budget (a long session's commands, a read-heavy one's paths).
Among commands, those whose last run failed come first, then the cheapest with their
program's group (`_Costs.share`: the arguments, and a share of the program's words, which
a group line writes once), then the latest: each command is one fact of what was run, so
the budget keeps the most of them when a long one (a database query, an inline script,
which recall finds by its own words) does not push out several short ones; the latest
commands are also those the summary lists whole and the recent messages still hold.

- the user's requests are the task: they take their part first, up to `REQUEST_SHARE` of
  the budget (what the other floors leave), and when they need more than that the later
  requests are shortened (`request_fact`: own words first, then cut) rather than dropped,
  the latest ones least; only when even the shortest cut cannot hold them all do the
  oldest later ones go (the first request never does, before any other fact); and when
  the budget cannot hold every fact, each later request is kept in its first
  `REQUEST_CUTS[0]` characters, what it asked, and the rest of a long one (the details a
  user pasted or spelled out) is left to recall rather than other facts whole;
- then each of errors, paths and commands takes up to `FLOOR_SHARE` of the budget for its
  own facts, before any kind takes the rest;
- commands are written grouped (`app.core.ledger.lines`): the runs of one program that
  differ only in their arguments cost those arguments, so they are kept, not dropped as
  near duplicates (`without_near_duplicates` remains for callers that want it).

What is left out is counted by kind in the ledger's last line; recall has it all.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from app.core.history import request_fact
from app.core.ledger.lines import (
    FAILED_SUFFIX,
    GROUP_SEPARATOR,
    GROUP_TAG,
    LEDGER_HEADING,
    PRIORITY,
    Fact,
    dropped_line,
    program_of,
    render_ledger,
)

FLOOR_SHARE = 0.15
REQUESTS = frozenset({"goal", "request", "latest_request"})
# The kinds that each get a floor, what the user asked first: then errors, paths, commands.
FLOORS = (
    REQUESTS,
    frozenset({"error"}),
    frozenset({"file_changed", "file_read"}),
    frozenset({"command"}),
)
# The requests' part: what the floors of the other kinds leave of the budget.
REQUEST_SHARE = 1 - FLOOR_SHARE * (len(FLOORS) - 1)
# The lengths (characters of the user's words, the ` …` mark after them) a later request
# is shortened to: the longest when all fit so, else the latest ones at the longest and
# the others at the shortest.
REQUEST_CUTS = (200, 50)
CUT_MARK = " …"
REFILL_TRIES = 8
_DIGITS = re.compile(r"\d+")


def _failed(fact: Fact) -> bool:
    return fact.kind == "command" and fact.text.endswith(FAILED_SUFFIX)


def near_key(command: str) -> str:
    """What near-duplicate commands share: the text with its whitespace collapsed, a
    trailing ` (failed)` left out and every run of digits read as one `0`."""
    return _DIGITS.sub("0", " ".join(command.removesuffix(FAILED_SUFFIX).split()))


def without_near_duplicates(facts: Sequence[Fact]) -> tuple[list[Fact], int]:
    """The facts with each set of near-duplicate commands (`near_key`) reduced to its
    latest, where it stands; and how many were left out."""
    latest = {near_key(f.text): i for i, f in enumerate(facts) if f.kind == "command"}
    kept = [f for i, f in enumerate(facts) if f.kind != "command" or latest[near_key(f.text)] == i]
    return kept, len(facts) - len(kept)


def fit_budget(
    facts: Sequence[Fact], budget: int, count: Callable[[str], int]
) -> tuple[list[Fact], int]:
    """The facts that fit `budget` tokens, returned in priority order, oldest first within
    a kind; and the number left out."""
    kept, _ = fit(facts, budget, count)
    return kept, len(facts) - len(kept)


def fit(
    facts: Sequence[Fact],
    budget: int,
    count: Callable[[str], int],
    near_duplicates: Mapping[str, int] | None = None,
) -> tuple[list[Fact], int]:
    """`fit_budget`'s facts and the tokens the rendered ledger takes (at most `budget`).
    `near_duplicates`: the facts already left out as such, by kind, for the last line.

    A fact costs its line (the first of a kind also its tag; a command joining its
    program's group, only its arguments). The floors are filled first, then the rest by
    value. Token counts of joined lines are not exactly additive, so the rendered ledger is
    counted at the end and the facts picked last are given back while it is over."""
    facts = shortened_requests(facts, int(budget * REQUEST_SHARE), count)
    if count(render_ledger(facts)) > budget:  # not every fact fits: requests at the longest cut
        facts = [_cut_request(f, REQUEST_CUTS[0]) for f in facts]
    rank = {kind: i for i, kind in enumerate(PRIORITY)}
    costs = _Costs(facts, count)
    order = sorted(
        range(len(facts)),
        key=lambda i: (
            rank.get(facts[i].kind, len(PRIORITY)),
            not _failed(facts[i]),
            costs.share(i) if facts[i].kind == "command" else 0,
            -i,
        ),
    )
    everything = Counter(f.kind for f in facts) + Counter(near_duplicates or {})
    used = count(LEDGER_HEADING) + count(dropped_line(sum(everything.values()), everything))
    picked: list[int] = []
    for kinds in FLOORS:
        floor = int(budget * (REQUEST_SHARE if kinds is REQUESTS else FLOOR_SHARE))
        spent = 0
        for i in (i for i in order if facts[i].kind in kinds):
            cost = costs.of(i)
            if spent + cost <= floor and used + cost <= budget:
                costs.take(i)
                picked.append(i)
                spent += cost
                used += cost
    taken = set(picked)
    for i in order:
        if i not in taken:
            cost = costs.of(i)
            if used + cost <= budget:
                costs.take(i)
                picked.append(i)
                used += cost

    def rendered(picks: list[int]) -> tuple[list[Fact], int]:
        chosen = sorted(picks, key=lambda i: (rank.get(facts[i].kind, len(PRIORITY)), i))
        kept = [facts[i] for i in chosen]
        left_out = left_out_kinds(facts, kept, near_duplicates)
        return kept, count(render_ledger(kept, sum(left_out.values()), left_out))

    kept, tokens = rendered(picked)
    while picked and tokens > budget:
        picked.pop()
        kept, tokens = rendered(picked)
    # The costs above are estimates on the safe side (the last line counted at its
    # longest): what they left unused is offered to the next facts in order, each tried on
    # the rendered ledger (a few tries at most); a fact taken may shorten the last line.
    tries = REFILL_TRIES
    for i in order:
        if tries == 0:
            break
        left = left_out_kinds(facts, kept, near_duplicates)
        shorter = count(dropped_line(sum(left.values()), left))
        if i in picked or costs.of(i) > budget - tokens + shorter:
            continue
        tries -= 1
        more, more_tokens = rendered([*picked, i])
        if more_tokens <= budget:
            costs.take(i)
            picked.append(i)
            kept, tokens = more, more_tokens
    return (kept, tokens) if kept else ([], 0)


def shortened_requests(
    facts: Sequence[Fact], share: int, count: Callable[[str], int]
) -> Sequence[Fact]:
    """`facts` with the later requests shortened until the requests' lines fit `share`
    tokens: all at the longest of `REQUEST_CUTS` when they fit so; else each at the
    shortest (its identifying words, `request_fact`), then the latest ones back at the
    longest while they fit (the latest request is the one the work is on). Unchanged when
    they fit whole; the first request (`goal`) is never cut."""
    asked = [f for f in facts if f.kind in REQUESTS]
    if _cost(asked, count) <= share:
        return facts
    longest = [_cut_request(f, REQUEST_CUTS[0]) for f in facts]
    if _cost([f for f in longest if f.kind in REQUESTS], count) <= share:
        return longest
    cut = [_cut_request(f, REQUEST_CUTS[-1]) for f in facts]
    left = share - _cost([f for f in cut if f.kind in REQUESTS], count)
    for i in reversed(range(len(facts))):
        if cut[i].kind in REQUESTS and cut[i] != longest[i]:
            more = count(f"- {longest[i].text}") - count(f"- {cut[i].text}")
            if more > left:
                break
            cut[i], left = longest[i], left - more
    return cut


def _cost(facts: Sequence[Fact], count: Callable[[str], int]) -> int:
    """What the request lines cost: each line, and each kind's tag once."""
    tags = sum(count(f"[{kind}] ") for kind in {f.kind for f in facts})
    return sum(count(f"- {f.text}") + 1 for f in facts) + tags


def _cut_request(fact: Fact, limit: int) -> Fact:
    """A later request in its first `limit` characters (its own words when it is mostly
    pasted, `request_fact`) and the mark: the mark is not taken from the words, so a
    request whose first line is that long keeps all of it that the cut promises."""
    if fact.kind not in ("request", "latest_request") or len(fact.text) <= limit:
        return fact
    return Fact(fact.kind, request_fact(fact.text, limit + len(CUT_MARK)))


def left_out_kinds(
    facts: Sequence[Fact], kept: Sequence[Fact], near_duplicates: Mapping[str, int] | None = None
) -> dict[str, int]:
    """The facts not kept, by kind, near duplicates included."""
    left = Counter(f.kind for f in facts) - Counter(f.kind for f in kept)
    return dict(sorted((left + Counter(near_duplicates or {})).items()))


class _Costs:
    """What each fact adds to the rendered ledger, given the facts taken so far."""

    def __init__(self, facts: Sequence[Fact], count: Callable[[str], int]) -> None:
        self.facts = facts
        self.count = count
        self.tagged: set[str] = set()
        self.programs: dict[str, list[list[str]]] = {}
        # How many commands each program has: its group line's words, shared among them.
        self.sizes = Counter(
            parts[0] for f in facts if f.kind == "command" and (parts := program_of(f.text))
        )

    def of(self, i: int) -> int:
        fact = self.facts[i]
        tag = 0 if fact.kind in self.tagged else self.count(f"[{fact.kind}] ")
        parts = program_of(fact.text) if fact.kind == "command" else None
        taken = self.programs.get(parts[0], []) if parts is not None else []
        if parts is None or not taken:
            return self.count(f"- {fact.text}") + 1 + tag
        words = parts[1].split(" ")
        joining = f"{GROUP_SEPARATOR}{' '.join(words[_shared(words, taken) :])}"
        if len(taken) == 1:  # the program's line becomes a group line
            joining = f"[{GROUP_TAG}] : {joining}"
        return self.count(joining) + tag

    def share(self, i: int) -> float:
        """What a command costs with its program's group: its arguments, and its part of
        the program's words, which the group writes once."""
        fact = self.facts[i]
        parts = program_of(fact.text)
        if parts is None:
            return float(self.count(f"- {fact.text}") + 1)
        own = self.count(f"{GROUP_SEPARATOR}{parts[1]}")
        return own + (self.count(f"- [{GROUP_TAG}] {parts[0]}: ") + 1) / self.sizes[parts[0]]

    def take(self, i: int) -> None:
        fact = self.facts[i]
        self.tagged.add(fact.kind)
        parts = program_of(fact.text) if fact.kind == "command" else None
        if parts is not None:
            self.programs.setdefault(parts[0], []).append(parts[1].split(" "))


def _shared(words: Sequence[str], taken: Sequence[Sequence[str]]) -> int:
    """How many leading words a command's arguments share with those of a command of its
    program already taken (at most all but its last): its line writes them once
    (`app.core.ledger.lines`), so joining it costs only the rest."""
    most = 0
    for other in taken:
        same = 0
        for mine, theirs in zip(words[:-1], other[:-1], strict=False):
            if mine != theirs or ":" in mine or not mine:
                break
            same += 1
        most = max(most, same)
    return most
