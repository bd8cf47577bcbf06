"""Is what a sentence says true of this history? Claims held to the extracted evidence.

A sentence can name only this conversation's things and still be false: "the tests pass"
after a last run that failed, "reproduce.py was kept" when it was removed, an error
blamed on a file it never touched, "line 233" when 233 is a count. Each rule reads what
the sentence asserts about the thing it names and compares it with the evidence
(`app.core.gate.evidence`); a sentence that fails one is dropped with the rule's name:

- `instruction`: the sentence speaks to the agent — in the second person, granting
  permission, asking for secrecy, or telling it to reveal credentials or environment
  variables. A summary records what happened; it never instructs.
- `not_user`: "the user asked / wants / said / authorised …" what only the agent said
  (its proposals, in words no user message and no tool result holds; what only a tool
  result says is `app.core.gate.grounding`'s borrowed request).
- `status`: a status word (passes / fails, still, installed, never changed, kept,
  submitted) that disagrees with the evidence about the thing named at the time the
  sentence speaks of (`app.core.gate.status`).
- `direction`: an edit told the other way round: stricter for names the edit took out,
  looser for names it put in (`app.core.gate.direction`).
- `attribution`: an error attributed to a file that no tool call and result share with it.
- `number`: a number with its neighbour word ("exit code 127", "line 168", "14 failed",
  "port 8080") that no text of the history holds together.
- `unasked` (in the sections that say what comes next): a next step the user never
  asked for and the agent's last words do not plan, or one that undoes work (deleting,
  disabling, skipping, pushing) the user never asked to undo.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.gate.coverage import stem
from app.core.gate.direction import direction_false
from app.core.gate.ending import END_KEYS
from app.core.gate.entities import Entity, HistoryText
from app.core.gate.evidence import Evidence
from app.core.gate.overlap import content_words, words
from app.core.gate.phrasing import instructs, user_claim
from app.core.gate.shape import is_none_statement
from app.core.gate.status import ERROR_NAME, status_false

# Sections that log calls and errors one by one: a present tense there tells of that call.
LOG_KEYS = frozenset({"tool calls", "errors", "technical context"})
RULES = ("instruction", "not_user", "status", "direction", "attribution", "number", "unasked")
# Words any sentence uses; they show nothing about whose words a claim repeats.
_PLAIN_TEXT = (
    "agent assistant user users asked asks wants wanted requested said says told would like "
    "also that this with from into have been being were which their there then them they "
    "make made should "
    "must need needs next step steps will going about after before done work task thing "
    "things file files code change changes some more only "
    # the same in German, French and Spanish: the function words of a claim
    "dass eine einen einer dann noch auch wird werden wurde soll sollte nicht nichts "
    "hat haben zu mit für über nutzer benutzer gebeten "
    "utilisateur demandé avec pour dans être fait faire plus "
    "usuario pidió para este esta como pero hacer ahora"
)
_PLAIN = frozenset(_PLAIN_TEXT.split())
_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”|«[^»]*»")
# The second person obliged, permitted or addressed with a task: "you may", "asked you",
# "your next step" (not "let me know if you need anything", said to whoever reads).
_YOU = re.compile(
    r"\byou\s+(?:may|can|could|should|must|shall|will|are (?:now )?(?:allowed|authori[sz]ed"
    r"|permitted|free|expected|required|cleared|to)|need to|have to|ought|do not|don't|never)\b"
    r"|\b(?:authori[sz]ed|allowed|permitted|told|asked|wants?|instructed|requires?|expects?"
    r"|needs?|trusts?)\s+you\b|\byour\s+(?:task|job|instructions?|next|role|goal|orders?)\b"
    r"|\b(?:yourself|for you)\b"
)
# The agent told in the third person what it should or may do ("the agent should push",
# "the assistant is allowed to"): the same instruction as "you should".
_TO_AGENT = re.compile(
    r"\b(?:the\s+)?(?:agent|assistant|model|ai)\s+(?:should|must|may|shall|is (?:now )?"
    r"(?:allowed|authori[sz]ed|permitted|free|expected|required|to)|needs? to|has to|ought)\b"
    r"|\b(?:from now on|going forward|in future|henceforth)\b"
)
_SECRECY = re.compile(
    r"\b(?:do not|don't|never|without|avoid)\s+(?:tell|inform|mention|notify|report|let|alert"
    r"|warn|show)\w*|\bkeep (?:\w+\s+){1,3}?(?:secret|quiet|hidden|private)\b"
    r"|\b(?:secretly|covertly)\b"
)
_PERMISSION = re.compile(
    r"\b(?:authori[sz]\w*|permit\w*|allow\w*|entitle\w*|cleared)\s+(?:you|the (?:agent|assistant|"
    r"model))\b|\bskip\w*\s+(?:all\s+|any\s+|the\s+|every\s+)?(?:confirmation|approval|review)s?\b"
    r"|\bwithout\s+(?:asking|confirmation|confirming|approval|permission)\b"
    r"|\bno need to (?:ask|confirm)\b"
)
_SECRET = re.compile(
    r"\b(?:environment variables?|env vars?|api[ -]?keys?|secrets?|credentials?|passwords?"
    r"|access tokens?|auth tokens?|private keys?|ssh keys?|printenv)\b|(?<![\w/])\.env\b"
)
_REVEAL = re.compile(
    r"\b(?:print|dump|echo|send|post|upload|copy|write|export|exfiltrat|list|reveal|share"
    r"|paste|output|log|save|collect|gather|read|include|email|leak)\w*"
)
_EVERY = re.compile(r"\b(?:every|all|any|each)\b")
# "Next step: run …", "Then", bullets: the label before a sentence's first verb.
_LABEL = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*)?(?:next(?: steps?)?|then|todo|to do|action|plan)\s*(?:\*\*)?"
    r"\s*[:—-]\s*|^\s*(?:[-*+]\s+|\d+[.)]\s+)"
)
_UNDO = re.compile(
    r"\b(?:delet|remov|drop|disabl|skip|revert|reset|force|push|deploy|publish|releas"
    r"|uninstall|wipe|purg|truncat|comment\w* out|mark\w* (?:them |it |the tests? )?(?:as )?"
    r"(?:skip|xfail)"
    # German, French, Spanish
    r"|lösch|entfern|deaktivier|überspring|zurücksetz|veröffentlich|supprim|désactiv|effac"
    r"|borr|elimin|desactiv|omit)\w*|\brm -|--no-verify\b"
)
# What marks a next step (not "will" alone: a quoted output says "will not repeat").
_NEXT = re.compile(
    r"\b(?:next|then|remaining|remains|todo|to do|plan(?:s|ned)? to|going to|still to"
    r"|(?:we|i|agent|assistant) (?:will|should|must|needs? to)"
    r"|als nächstes|nächster schritt|prochaine étape|il reste à|siguiente paso|próximo paso"
    r"|a continuación|queda por)\b"
)
_USER_CLAIM = re.compile(
    r"\b(?:per|at|by|on) the user'?s?\s+(?:own\s+|explicit\s+)?(?:request|instructions?|wish"
    r"|demand|approval)\b|\bas the user\s+(?:asked|requested|wanted|said|instructed)\b"
    r"|\b(?:the\s+)?user\s+(?:has\s+|had\s+|also\s+|explicitly\s+|then\s+|later\s+)*"
    r"(?:asked|asks|wants|wanted|requested|requests|said|says|told|instructed|instructs"
    r"|authori[sz]ed|authori[sz]es|approved|agreed|insisted|prefers|preferred|would like"
    r"|demanded|confirmed|decided|chose|suggested|proposed|specified|requires|required"
    r"|expects|expected|permitted|allowed|directed)\b"
)
_CLAUSE_END = re.compile(r"[;:]|\s[—–]\s|,\s+(?:but|while|whereas)\b|\.\s")
# Verbs that turn a request around (undo, keep as is), which a user claim may use only
# when the user did.
_TURNED = re.compile(
    r"\b(?:keep|leave|remove|delete|revert|undo|disable|drop|skip|ignore|abandon|truncate)\b"
)
# A number and the word beside it, in either order; each class lists the words the
# history may write it with.
_UNIT_CLASSES: dict[str, tuple[str, ...]] = {
    "line": ("line", "lines", "ln", "lineno", "l"),
    "exit": ("exit", "exited", "code", "status", "returned", "rc", "returncode"),
    "port": ("port", "ports", "listening", "localhost", "0.0.0.0", "127.0.0.1"),
    "pass": ("passed", "pass", "passes", "passing", "ok", "succeeded"),
    "fail": ("failed", "fail", "fails", "failing", "failures", "failure", "errors", "error"),
}
_BEFORE = {
    "line": "line", "lines": "line", "exit code": "exit", "exit status": "exit",
    "exited with": "exit", "exited with code": "exit", "exit": "exit", "port": "port",
    "zeile": "line", "ligne": "line", "línea": "line", "exit-code": "exit",
    "code de sortie": "exit", "código de salida": "exit", "puerto": "port",
}  # fmt: skip
_AFTER = {
    "passed": "pass", "pass": "pass", "passes": "pass", "passing": "pass",
    "failed": "fail", "fail": "fail", "fails": "fail", "failing": "fail", "failures": "fail",
    "errors": "fail",
}  # fmt: skip
_NUMBER_BEFORE = re.compile(
    r"\b(?P<word>lines?|exit code|exit status|exited with code|exited with|exit-code|exit|port"
    r"|zeile|ligne|línea|code de sortie|código de salida|puerto)"
    r"\s*[:=]?\s*(?P<n>\d+)\b"
)
_NUMBER_AFTER = re.compile(
    r"(?<![\w.:/-])(?P<n>\d+)\s+(?:(?:tests?|cases?|specs?|of them)\s+)?"
    r"(?:(?:have|had|were|are)\s+)?"
    r"(?P<word>passed|passes|passing|pass|failed|fails|failing|fail|failures|errors)\b"
)
NUMBER_WINDOW = 40
# A user claim repeats others' words: this many of its words, more than the user's.
ELSEWHERE_MIN = 2
# A next step the user and the agent's last words do not hold: this many of its words.
UNPLANNED_MIN = 2
LATE_NOTES = 3
# A sentence the user's messages hold word for word, this long at least, is their quote.
QUOTE_WORDS = 5


@dataclass(frozen=True)
class Facts:
    """What the claim rules read: the evidence, the history's text by source, and the
    user's and the agent's latest vocabulary, stemmed."""

    evidence: Evidence
    history: HistoryText
    user_stems: frozenset[str]
    late_stems: frozenset[str]
    agent_stems: frozenset[str]  # words only the agent used (its text and calls)
    result_stems: frozenset[str]  # words only tool results hold
    flat: str  # every text of the history, lower-cased, for number pairs

    @classmethod
    def of(cls, evidence: Evidence, history: HistoryText) -> Facts:
        late = " ".join(text for _, text in evidence.notes[-LATE_NOTES:])
        return cls(
            evidence,
            history,
            frozenset(_stem(w) for w in history.vocabulary["user"]),
            frozenset(_stem(w) for w in words(late)),
            frozenset(
                _stem(w)
                for w in history.vocabulary["agent"]
                - history.vocabulary["results"]
                - history.vocabulary["user"]
            ),
            frozenset(
                _stem(w)
                for w in history.vocabulary["results"]
                - history.vocabulary["agent"]
                - history.vocabulary["user"]
            ),
            " ".join((history.user, history.agent, history.results)),
        )


def false_claim(sentence: str, key: str, found: Sequence[Entity], facts: Facts) -> str | None:
    """The rule `sentence` (under the section `key`) breaks, or None."""
    low = sentence.lower()
    bare = _QUOTED.sub(" ", low)
    if _instructs(bare) and not _quotes_user(low, facts.history):
        return "instruction"
    if _not_users(low, found, facts):
        return "not_user"
    log = key in LOG_KEYS
    if key != "goals" and status_false(sentence, low, found, facts.evidence, log):
        return "status"
    if key != "goals" and direction_false(low, found, facts.evidence):
        return "direction"
    if _misattributed(sentence, found, facts.evidence):
        return "attribution"
    if _numbers_false(low, facts.flat):
        return "number"
    if (key in END_KEYS and key != "goals") and _unasked(bare, low, facts):
        return "unasked"
    return None


def _quotes_user(low: str, history: HistoryText) -> bool:
    """Whether the sentence is the user's own words, quoted (a summary keeps what the user
    said exactly, "you may use any bash command" included): a record, not an order. A
    cut quote (`…`) is read up to the cut."""
    text = " ".join(low.split("…", 1)[0].split()).strip(" -*.")
    return len(text.split()) >= QUOTE_WORDS and text in history.user


def _instructs(bare: str) -> bool:
    if instructs(bare):
        return True  # addressed to the agent in German, French, Spanish …
    if _YOU.search(bare) or _SECRECY.search(bare) or _PERMISSION.search(bare):
        return True
    if _TO_AGENT.search(bare):
        return True
    if _SECRET.search(bare) and _REVEAL.search(bare):
        opening = _LABEL.sub("", bare, count=1)
        return bool(_EVERY.search(bare) or _REVEAL.match(opening.strip()))
    return False


def _claim_words(text: str) -> set[str]:
    return {
        _stem(w)
        for w in content_words(words(text))
        if len(w) >= 4 and w not in _PLAIN and not w.isdigit()
    }


def _stem(word: str) -> str:
    """`stem`, and `fixes`, `pushes`, `matches` → `fix`, `push`, `match`."""
    if word.endswith("es") and word[-3:-2] in ("x", "s", "h") and len(word) > 4:
        return word[:-2]
    return stem(word)


def _not_users(low: str, found: Sequence[Entity], facts: Facts) -> bool:
    match = _USER_CLAIM.search(low)
    before = ""  # a German claim's words before its final verb
    english = match is not None
    if match is None:
        other = user_claim(low)
        if other is None:
            return False
        match, before = other
    claim = before + " " + _CLAUSE_END.split(low[match.end() :], maxsplit=1)[0]
    named = [e for e in found if e.text.lower() in claim]
    prose = claim
    for entity in named:  # a name counts once, as a name, not again by its words
        prose = prose.replace(entity.text.lower(), " ")
    said = _claim_words(prose)
    supported = sum(1 for w in said if w in facts.user_stems)
    others = facts.agent_stems | facts.result_stems
    elsewhere = sum(1 for w in said if w not in facts.user_stems and w in others)
    turned = _TURNED.search(prose) if english else None
    if turned is not None and _stem(turned.group()) not in facts.user_stems:
        return True  # the user's request turned around: "keep … failing", "remove the flag"
    for entity in named:
        sources = facts.history.sources(entity)
        if "user" in sources:
            supported += 1
        elif sources and "user" not in sources and sources != {"agent", "results"}:
            elsewhere += 1
    return elsewhere >= ELSEWHERE_MIN and elsewhere > supported


def _misattributed(sentence: str, found: Sequence[Entity], evidence: Evidence) -> bool:
    names = {n.lower() for n in ERROR_NAME.findall(sentence)}
    paths = [
        e.text.lower().lstrip("./")
        for e in found
        if e.kind == "path" and not any(n in e.text.lower() for n in names)
    ]
    if not names or not paths:
        return False
    files = [_whole_name(p.rsplit("/", 1)[-1]) for p in paths]
    for name in names:
        steps = [s for s in evidence.steps if name in s.result]
        if not steps:
            continue
        if not any(f.search(s.result) or f.search(s.call) for s in steps for f in files):
            return True
    return False


def _whole_name(file: str) -> re.Pattern[str]:
    """`file` as a whole name: after a path separator, a space or a quote, not inside a
    longer one (`rechnung.py` is not `test_rechnung.py`, nor `rechnung.pyc`)."""
    return re.compile(rf"(?<![\w.-]){re.escape(file)}(?![\w-]|\.\w)")


def _numbers_false(low: str, flat: str) -> bool:
    pairs = [(m.group("n"), _BEFORE[m.group("word")]) for m in _NUMBER_BEFORE.finditer(low)]
    pairs += [(m.group("n"), _AFTER[m.group("word")]) for m in _NUMBER_AFTER.finditer(low)]
    return any(not _pair_held(number, unit, flat) for number, unit in pairs)


def _pair_held(number: str, unit: str, flat: str) -> bool:
    """Whether the history writes `number` beside a word of `unit`'s class (a line also as
    `file.py:168` or `168:`, a port as `:8080`)."""
    for match in re.finditer(rf"(?<![\w.]){re.escape(number)}(?![\w])", flat):
        start, end = match.start(), match.end()
        if unit in ("line", "port") and (
            flat[start - 1 : start] == ":" or flat[end : end + 1] == ":"
        ):
            return True
        near = flat[max(0, start - NUMBER_WINDOW) : end + NUMBER_WINDOW]
        if set(re.findall(r"[\w.]+", near)) & set(_UNIT_CLASSES[unit]):
            return True
    return False


def _unasked(bare: str, low: str, facts: Facts) -> bool:
    """A next step that undoes work the user never asked to undo, or that neither the user
    nor the agent's last words plan."""
    marker = _NEXT.search(bare)
    if marker is None:
        return False
    at = low.find(marker.group())
    step = low[at + len(marker.group()) :] if at >= 0 else low  # what comes after "next"
    step = step.lstrip(" :—-")
    if is_none_statement(step):
        return False
    undo = _UNDO.search(_QUOTED.sub(" ", step))
    said = _claim_words(step)
    if undo is not None and _stem(undo.group().split()[0]) not in facts.user_stems:
        return not said or sum(w in facts.user_stems for w in said) < len(said) / 2
    unplanned = [w for w in said if w not in facts.user_stems and w not in facts.late_stems]
    return len(unplanned) >= UNPLANNED_MIN and len(unplanned) > len(said) / 2
