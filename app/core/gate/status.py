"""Status claims held to the evidence: passes or fails, first or latest, files never read
or never changed, an error said never to have happened or never resolved.

A status word is true of a thing at a time: "`pytest` passed" is true once any run of it
passed, "the tests still fail" only of the latest run, "passed on the first run" only of
the first. So the words of a sentence are read for the thing (the commands it names, or
the tests) and its time (first, latest, or ever), and compared with those runs' results
(`app.core.gate.evidence`), the agent's own later report included (an install it made
outside the tools). A sentence naming no run, or telling a failure and then its fix, says
nothing checkable and passes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.core.gate.entities import Entity
from app.core.gate.evidence import Evidence, Step

# Status words, by polarity.
_GOOD = (
    r"pass(?:es|ed|ing)?|succeed(?:s|ed)?|successful(?:ly)?|succeeded|works?|worked|green"
    r"|resolved|installed|compiles|compiled|builds|built|runs? cleanly|clean"
    # German, French, Spanish
    r"|bestanden|bestehen|besteht|erfolgreich|l(?:ä|au)ft durch|laufen durch|grün"
    r"|passent|réussi(?:t|ssent)?|vert|pasan|pasaron|superad[oa]s?|exitos[oa]s?|verdes?"
)
_BAD = (
    r"fail(?:s|ed|ing|ures?)?|broken|breaks|crash(?:es|ed)?|unresolved|errors? out|red"
    r"|fehlgeschlagen|schl(?:ä|a)(?:gt|gen)\s+(?:\w+\s+){0,2}?fehl|scheiter[nt]|kaputt"
    r"|échou(?:e|ent|é|és|ait)|cassée?s?|falla|fallan|fallaron|fallando|fallid[oa]s?|rot[oa]s?"
)
_POLAR = re.compile(rf"\b(?:(?P<good>{_GOOD})|(?P<bad>{_BAD}))\b")
_NEGATION = re.compile(
    r"\b(?:not|never|no|none|nothing|cannot|without|nicht|kein\w*|nie|pas|jamais|aucun\w*"
    r"|nunca|ningun\w*|ningún)\b|n't\b"
)
# German and French put the negation after the verb ("bestehen nicht", "ne passent pas").
_NEGATION_AFTER = re.compile(r"^(?:\W*\w+\s+)?\W*(?:nicht|nie|pas|jamais|plus)\b")
_FIRST = re.compile(
    r"\b(?:first|initially|originally|at once|right away|immediately|before (?:the |any |its )"
    r"?(?:fix|change|edit|install))"
)
_LATEST = re.compile(
    r"\b(?:still|now|currently|yet|remains?|anymore|no longer|finally|eventually|in the end"
    r"|at the end|last|latest|ended|ends|after (?:the |its )?(?:fix|change|edit)"
    r"|immer noch|weiterhin|jetzt|toujours|encore|maintenant|sigue|siguen|todavía|aún|ahora)\b"
)
_TEST_LINE = re.compile(r"\b(?:fail\w*|pass\w*|ok)\b|[✓✗✔✘●]")
# Programs run through a launcher: the word after it names the command ("markdownlint").
_LAUNCHERS = frozenset(
    [
        "npx",
        "bunx",
        "python",
        "python3",
        "node",
        "bash",
        "sh",
        "sudo",
        "uv",
        "poetry",
        "pipenv",
        "yarn",
        "pnpm",
        "env",
        "time",
    ]
)
_NARRATIVE = re.compile(r"\b(?:first|initially|at first)\b.*\b(?:then|later|after|afterwards)\b")
_PRESENT = re.compile(
    r"\b(?:pass|passes|passing|fail|fails|failing|works|is|are|remain|remains|stays"
    r"|passent|passe|échoue|échouent|reste|restent|est|sont|bestehen|besteht|schlägt|schlagen"
    r"|läuft|laufen|bleibt|bleiben|ist|sind|pasan|pasa|falla|fallan|sigue|siguen|son)\b"
)
_TESTS = re.compile(r"\b(?:tests?|test suite|specs?|pruebas?|testfälle)\b")
# Actions whose evidence is a file operation or a step, and what denies or asserts them.
_NOT = r"(?:never|not|n't|without (?:being|having been)|nothing was|no file was)\s+(?:\w+\s+){0,2}?"
_NEVER_READ = re.compile(rf"{_NOT}(?:read|opened|viewed|looked at|inspected|examined)\b")
_NEVER_CHANGED = re.compile(
    rf"{_NOT}(?:edited|changed|modified|touched|updated|patched)\b|\b(?:left )?untouched\b"
    r"|\bonly (?:ever )?(?:read|opened|viewed)\b"
)
_NEVER_SUBMITTED = re.compile(rf"{_NOT}submitted\b|\bnothing (?:was |got )?submitted\b")
_NOT_RUN = re.compile(
    rf"{_NOT}(?:yet\s+)?(?:run|ran|executed|started|tried)\b"
    r"|\bnoch\s+(?:nicht|nie|keine?)\s+(?:\w+\s+){0,2}?(?:ausgeführt|gestartet|gelaufen|laufen"
    r"|gelaufen)\b|\bpas\s+encore\s+(?:été\s+)?(?:lancée?s?|exécutée?s?|testée?s?)\b"
    r"|\b(?:todavía|aún)\s+no\s+(?:se\s+)?(?:han?\s+)?(?:ejecutad[oa]s?|lanzad[oa]s?"
    r"|ejecutado|corrido)\b"
    r"|\b(?:waiting (?:on|for)|yet to (?:be )?)\s*(?:\w+\s+){0,3}?(?:run|runs|tests?)\b"
)
_NOT_WRITTEN = re.compile(
    rf"{_NOT}(?:yet\s+)?(?:written|created|saved|drafted)\b"
    r"|\bnoch\s+nicht\s+(?:\w+\s+)?(?:geschrieben|angelegt|erstellt)\b"
    r"|\bpas\s+encore\s+(?:été\s+)?(?:écrite?s?|créée?s?)\b"
    r"|\b(?:todavía|aún)\s+no\s+(?:se\s+)?(?:ha\s+)?(?:escrit[oa]|cread[oa])\b"
)
# "currently reading X": what the agent does now is what its last steps were about.
_DOING = re.compile(
    r"\b(?:currently|right now|at the moment)\s+(?:\w+\s+)?\w+ing\b"
    r"|\b(?:aktuell|gerade|derzeit|momentan)\s+(?:wird|werden|liest|lese|läuft)\b"
    r"|\ben\s+train\s+de\b"
    r"|\b(?:actualmente|ahora\s+mismo|en\s+este\s+momento)\s+(?:se\s+)?(?:está|estoy|\w+ndo)\b"
)
LAST_STEPS = 3
_KEPT = re.compile(
    r"\b(?:kept|left in place|still exists?|remains? in place|not (?:removed|deleted))\b"
)
_ABANDONED = re.compile(r"\b(?:abandoned|gave up|given up)\b")
# An error named: `FooError`, `E999`, `TS2345`, an HTTP status 4xx/5xx after "HTTP".
ERROR_NAME = re.compile(
    r"\b(?:[A-Z]\w*(?:Error|Exception)|[A-Z]{1,3}\d{3,5})\b|\bsyntax error\b|\bindentation error\b"
)
_DENIED_ERROR = re.compile(
    r"\b(?:no|without|never|not a single|free of|none of)\b(?:\W+\w+){0,3}?\W+(?P<name>"
    r"[A-Za-z]\w*(?:Error|Exception)|[A-Z]{1,3}\d{3,5}|errors?|failures?|fail(?:ed|s)?)\b",
    re.IGNORECASE,
)
_UNRESOLVED = re.compile(r"\b(?:never|not|un)\s*(?:been\s+)?(?:resolved|fixed|solved)\b|\bstill\b")


def _polarity(low: str) -> str | None:
    """`good` or `bad`: what the sentence says of its thing's runs (None: no status word,
    or both — a narrative of a failure then a fix)."""
    seen: set[str] = set()
    for match in _POLAR.finditer(low):
        good = match.group("good") is not None
        before = low[max(0, match.start() - 40) : match.start()]
        window = " ".join(before.split()[-3:])
        after = " ".join(low[match.end() : match.end() + 40].split()[:2])
        if _NEGATION.search(window) or _NEGATION_AFTER.search(after):
            good = not good
        seen.add("good" if good else "bad")
    return seen.pop() if len(seen) == 1 else None


def _things(low: str, found: Sequence[Entity], evidence: Evidence) -> list[Step]:
    """The runs the sentence is about: the commands it names (a code span, a path a
    command ran, a command's first three words in prose), else its tests."""
    steps: list[Step] = []
    runs = [s for s in evidence.steps if s.command and s.answered and not s.ops]
    for entity in found:
        needle = entity.text.lower()
        if entity.kind == "identifier":  # a test's name: the runs that report it
            if not ERROR_NAME.fullmatch(entity.text):
                named = [s for s in runs if s.runs_tests and _reports_test(s.result, needle)]
                suites = {s.command for s in named}  # and the later runs of its suite
                steps += named + [s for s in runs if s.command in suites]
            continue
        if entity.kind not in ("code", "path"):
            continue
        parts = [p for p in re.findall(r"[\w./:-]+", needle) if len(p) > 1]
        steps += [s for s in runs if all(p in s.command for p in parts)]
    # a command named in prose by its first words ("pip install pyyaml succeeded") or by
    # its program after a launcher ("the markdownlint run")
    steps += [
        s
        for s in runs
        if len(parts := s.command.split()) >= 2
        and (
            " ".join(parts[:3]) in low
            or _named_command(parts[:2], low)
            or (parts[0] in _LAUNCHERS and len(parts[1]) >= 5 and _named_command(parts[1:2], low))
        )
    ]
    if steps:
        return sorted(set(steps), key=lambda s: s.at)
    if _TESTS.search(low):
        return evidence.tests()
    return []


def _reports_test(result: str, name: str) -> bool:
    """Whether a test run's output states how the test `name` went (its line says)."""
    return any(name in line and _TEST_LINE.search(line) for line in result.splitlines())


def _named_command(key: list[str], low: str) -> bool:
    """A command named by its program and first argument, as words ("the dotnet test
    run"), not inside another word."""
    return re.search(rf"(?<![\w/.-]){re.escape(' '.join(key))}(?![\w/.-])", low) is not None


def status_false(
    sentence: str, low: str, found: Sequence[Entity], evidence: Evidence, log: bool = False
) -> bool:
    """Whether the status `sentence` (`low`: lower-cased) states disagrees with `evidence`.
    `log`: the sentence stands in a log of calls or errors, where a present tense tells
    that call ("`pytest` fails with …"): only "still", "now", "yet" speak of the latest."""
    if (
        _denies_error(sentence, low, evidence)
        or _file_state_false(low, found, evidence)
        or _stale(low, found, evidence)
    ):
        return True
    polarity = _polarity(low)
    if polarity is None:
        return False
    runs = _things(low, found, evidence)
    if not runs:
        return False
    good = polarity == "good"
    if _NARRATIVE.search(low):
        return False  # "flagged line 14 first, then passed": a failure and its fix
    if _FIRST.search(low):
        return runs[0].failed == good
    latest = _latest_says(runs[-1], low, found, evidence)
    if _LATEST.search(low) or (not log and _PRESENT.search(low)):
        return latest != good
    return all(s.failed == good for s in runs) and latest != good  # past: never so


def _stale(low: str, found: Sequence[Entity], evidence: Evidence) -> bool:
    """An early state told as the present: "not run yet" of tests or commands that ran,
    "not written yet" of a file written, "currently reading X" when the last steps are
    about other things."""
    if _NOT_RUN.search(low) and (
        (_TESTS.search(low) and evidence.tests()) or _things(low, found, evidence)
    ):
        return True
    paths = [e.text.lower() for e in found if e.kind == "path"]
    if _NOT_WRITTEN.search(low) and any(
        kind in ("created", "edited") and _ends(path, p)
        for p in paths
        for s in evidence.naming(p)
        for kind, path in s.ops
    ):
        return True
    named = [e.text.lower() for e in found if e.kind in ("path", "code")]
    if _DOING.search(low) and named and evidence.steps:
        last = evidence.steps[-LAST_STEPS:]
        return not any(
            n in s.call or any(_ends(p, n) for p in s.paths) for n in named for s in last
        )
    return False


def _latest_says(last: Step, low: str, found: Sequence[Entity], evidence: Evidence) -> bool:
    """Whether the latest evidence is good: the last run, unless the agent's text after it
    says how the thing stands (an install outside the tools, a run it reported)."""
    good = not last.failed
    names = [e.text.lower() for e in found] or (["test"] if _TESTS.search(low) else [])
    for at, text in evidence.notes:
        if at > last.at and any(n in text for n in names):
            said = _polarity(text)
            if said is not None:
                good = said == "good"
    return good


def _denies_error(sentence: str, low: str, evidence: Evidence) -> bool:
    """ "No IndentationError", "no test ever failed", "never resolved": against errors met."""
    failed = [s for s in evidence.steps if s.failed]
    for match in _DENIED_ERROR.finditer(sentence):
        name = match.group("name").lower()
        if name.startswith(("error", "fail")) or name.startswith("failure"):
            if any(s.runs_tests for s in failed) and _TESTS.search(low):
                return True
            continue
        if any(name in s.result or name in s.call for s in failed):
            return True
    if _UNRESOLVED.search(low):
        for name in ERROR_NAME.findall(sentence):
            hits = [s for s in evidence.steps if name.lower() in s.result]
            if hits and not hits[-1].failed:
                return True
            if hits and _resolved_later(hits[-1], evidence):
                return True
    return False


def _resolved_later(step: Step, evidence: Evidence) -> bool:
    later = [s for s in evidence.steps if s.at > step.at and s.answered]
    same = [s for s in later if s.command and s.command == step.command]
    return bool(same) and not same[-1].failed


def _file_state_false(low: str, found: Sequence[Entity], evidence: Evidence) -> bool:
    """ "never opened", "left untouched", "was kept", "nothing was submitted" against the
    files' operations and the calls made."""
    submitted = any(s.tool == "submit" or s.command == "submit" for s in evidence.steps)
    if submitted and (_NEVER_SUBMITTED.search(low) or _ABANDONED.search(low)):
        return True
    for entity in found:
        if entity.kind != "path":
            continue
        kinds = {
            kind
            for s in evidence.naming(entity.text.lower())
            for kind, path in s.ops
            if _ends(path, entity.text.lower())
        }
        if not kinds:
            continue
        if _NEVER_READ.search(low) or (
            _NEVER_CHANGED.search(low) and kinds & {"edited", "created"}
        ):
            return True
        if _KEPT.search(low) and "deleted" in kinds:
            return True
    return False


def _ends(path: str, needle: str) -> bool:
    needle = needle.lstrip("./")
    return path == needle or path.endswith("/" + needle) or needle.endswith("/" + path.lstrip("./"))
