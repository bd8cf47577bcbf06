"""The checkable things a summary states — paths, URLs, commands and code, identifiers,
numbers — and where in the history each occurs.

Prose can paraphrase; an entity cannot: `/home/user/app/Dockerfile`, `docker build`,
`TimeDelta._serialize` or `1475` either occur in the conversation or the model made them
up (or copied them from another session). So the gate (`app.core.gate.grounding`) looks each
one up in the history, split by who said it: the user, the agent (its text and its tool
calls) and the tool results. Text that only a tool result holds is what a file or a web
page said, never the user's request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from app.core.compact_json import compact_json
from app.core.gate.overlap import words
from app.core.history import user_words
from app.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, tool_result_text

EntityKind = Literal["url", "path", "code", "identifier", "number"]
Source = Literal["user", "agent", "results"]
SOURCES: tuple[Source, ...] = ("user", "agent", "results")

_URL = re.compile(r"\b(?:https?|ftp|file)://[^\s`'\"<>)\]]+", re.IGNORECASE)
_CODE = re.compile(r"`([^`\n]{2,200})`")
# A path: a word with a slash (not a URL, not a fraction), or a file name with an extension.
_PATH = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*|(?<![\w/.-])[\w@+-][\w.@+-]*\.[A-Za-z]\w{0,7}\b"
)
# snake_case, CamelCase with an inner capital, dotted names (`a.b_c`), `a::b`, dashed flags.
_IDENTIFIER = re.compile(
    r"(?<![\w.-])(?:--?[a-z][\w-]{2,}|[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)+"
    r"|[a-z]+_[\w]+|_\w+|[A-Z]?[a-z]+[A-Z]\w*|[A-Z]{2,}[a-z]+\w*)(?![\w-])"
)
# A number worth checking: three digits or more, or with dots (versions, addresses).
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)+(?!\w|\.\w)|(?<![\w.,])\d{3,}(?!\w|[.,]\d)")
_TRAILING = ".,;:!?)]}'\""
_CUT_WORD = re.compile(r"`?[^\s`]*\s?(?:…|\.\.\.)")
# Occurrences of a code span's first word tried before it counts as absent (a long
# history names `python` thousands of times).
MAX_CODE_TRIES = 400
# File names that say "a file name" in prose rather than naming one (`e.g.`, `i.e.`, `etc.`).
_NOT_PATHS = frozenset({"e.g", "i.e", "etc", "vs", "a.m", "p.m"})


@dataclass(frozen=True)
class Entity:
    kind: EntityKind
    text: str
    in_code: bool = False  # a URL inside a code span: a command that fetches it


def entities(text: str) -> list[Entity]:
    """The entities `text` states, each once, URLs and code spans first (their paths and
    identifiers are not counted again)."""
    found: dict[str, Entity] = {}
    # a word cut short (`PixelR …`) names nothing, and a code fence is no code span
    text = _CUT_WORD.sub(" ", text.replace("```", " "))
    rest = text
    spans = [m.span() for m in _CODE.finditer(text)]
    for match in _URL.finditer(text):
        url = match.group().rstrip(_TRAILING)
        in_code = any(a < match.start() < b for a, b in spans)
        found.setdefault(url.lower(), Entity("url", url, in_code))
    rest = _URL.sub(" ", rest)
    for match in _CODE.finditer(rest):
        code = match.group(1).strip()
        kind: EntityKind = "code" if " " in code else _single_kind(code)
        if len(code) >= 2:
            found.setdefault(code.lower(), Entity(kind, code))
    rest = _CODE.sub(" ", rest)
    patterns: tuple[tuple[EntityKind, re.Pattern[str]], ...] = (
        ("path", _PATH), ("identifier", _IDENTIFIER), ("number", _NUMBER),
    )  # fmt: skip
    for kind, pattern in patterns:
        for match in pattern.finditer(rest):
            value = match.group().rstrip(_TRAILING)
            if _is_entity(kind, value):
                found.setdefault(value.lower(), Entity(kind, value))
        rest = pattern.sub(" ", rest)
    return list(found.values())


def _single_kind(code: str) -> EntityKind:
    if _PATH.fullmatch(code):
        return "path"
    if _NUMBER.fullmatch(code):
        return "number"
    return "identifier"


def _is_entity(kind: str, value: str) -> bool:
    if kind != "path":
        return len(value) >= 3
    bare = value.strip("/.")
    return len(bare) >= 3 and bare.lower() not in _NOT_PATHS and not bare.replace("/", "").isdigit()


@dataclass(frozen=True)
class HistoryText:
    """The history's text by who said it, lower-cased, whitespace collapsed, for lookups."""

    user: str
    agent: str
    results: str
    tokens: dict[Source, frozenset[str]] = field(default_factory=dict)
    vocabulary: dict[Source, frozenset[str]] = field(default_factory=dict)
    results_words: str = ""  # the tool results' words joined by spaces, for phrase lookups

    @classmethod
    def of(cls, messages: tuple[Message, ...] | list[Message], extra: str = "") -> HistoryText:
        """`extra`: text the answer was also shown (the digest's notes): the agent's side."""
        user, agent, results = [], [extra], []
        for message in messages:
            if message.role == "user":
                user.append(user_words(message))
            for block in message.blocks():
                if isinstance(block, ToolResultBlock):
                    results.append(tool_result_text(block))
                elif isinstance(block, ToolUseBlock):
                    agent.append(f"{block.name} {compact_json(block.input)}")
                    agent.extend(str(v) for v in block.input.values() if isinstance(v, str))
                elif isinstance(block, TextBlock):
                    if message.role == "assistant":
                        agent.append(block.text)
                    elif message.role == "user" and not user_words(message):
                        results.append(block.text)  # harness text: not the user's words
                    elif message.role == "system":
                        agent.append(block.text)
        texts: dict[Source, str] = {
            "user": _flat(user), "agent": _flat(agent), "results": _flat(results),
        }  # fmt: skip
        tokens = {source: frozenset(_tokens(text)) for source, text in texts.items()}
        vocabulary = {source: frozenset(words(text)) for source, text in texts.items()}
        joined = f" {' '.join(words(texts['results']))} "
        return cls(texts["user"], texts["agent"], texts["results"], tokens, vocabulary, joined)

    def in_results(self, phrase: list[str]) -> bool:
        """Whether these words occur in a tool result, in order and next to each other."""
        return bool(phrase) and f" {' '.join(phrase)} " in self.results_words

    def only_in_results(self, word: str) -> bool:
        """Whether only tool results use `word` (neither the user nor the agent)."""
        return (
            word in self.vocabulary["results"]
            and word not in self.vocabulary["user"]
            and word not in self.vocabulary["agent"]
        )

    def quotes(self, fragment: str) -> bool:
        """Whether `fragment` occurs as it is (case and whitespace aside) in what anyone said
        or a tool returned: a summary that has it quotes the history."""
        needle = _flat([fragment])
        return any(needle in text for text in (self.user, self.agent, self.results))

    def holds_word(self, word: str) -> bool:
        return any(word in vocabulary for vocabulary in self.vocabulary.values())

    def sources(self, entity: Entity) -> set[Source]:
        """Where `entity` occurs: a path or identifier as a whole token, anything else as text."""
        needle = _flat([entity.text])
        if entity.kind == "identifier" and "(" in needle:
            needle = needle.split("(", 1)[0] or needle  # `is_dosage(text)` names `is_dosage`
        return {source for source in SOURCES if self._holds(source, entity.kind, needle)}

    def _holds(self, source: Source, kind: EntityKind, needle: str) -> bool:
        text = getattr(self, source)
        if kind in ("path", "identifier"):
            bare = needle.strip("./")
            if needle in self.tokens[source] or bare in self.tokens[source]:
                return True
            if kind == "path":
                return _path_in(bare, text)
            if re.search(rf"(?<![\w-]){re.escape(needle)}(?![\w-])", text):
                return True
            # `Class.method`, `module::name`: each part named in the history
            parts = [p for p in re.split(r"\.|::", bare) if p]
            return len(parts) > 1 and all(p in self.tokens[source] or p in text for p in parts)
        if kind == "code":
            return needle in text or _code_in(needle, text)
        if kind == "url":
            return needle.rstrip("/") in text
        return re.search(rf"(?<![\d.]){re.escape(needle)}(?![\d])", text) is not None


def _flat(parts: list[str]) -> str:
    return " ".join(" ".join(p.lower().split()) for p in parts if p)


_TOKEN = re.compile(r"[^\s`'\"<>()\[\]{},;]+")


def _tokens(text: str) -> set[str]:
    """Whole tokens and their forms without trailing punctuation or leading `./`."""
    out: set[str] = set()
    for token in _TOKEN.findall(text):
        bare = token.rstrip(".:!?").lstrip("./") if token not in ("./", "../") else token
        out.update((token, bare))
        if "/" in bare:  # each trailing part of a path: `tests/a.py` also names `a.py`
            parts = bare.split("/")
            out.update("/".join(parts[i:]) for i in range(1, len(parts)))
            out.update(part for part in parts if part)
    return out


def _path_in(path: str, text: str) -> bool:
    """A path named by its end (`fields.py`, `marshmallow/fields.py`) or its directory
    (`src/marshmallow`) occurs when the history has it as a whole path component run."""
    return re.search(rf"(?<![\w.-]){re.escape(path)}(?=[/\s`'\":,;)\]]|$)", text) is not None


def _code_in(code: str, text: str) -> bool:
    """A code span (a command, an expression) occurs when its words occur in order close
    together: quoting adds and drops punctuation, a summary may elide flags."""
    words = [w for w in re.findall(r"[\w./:-]+", code) if len(w) > 1]
    if not words:
        return True
    at, tries = text.find(words[0]), 0
    while at >= 0 and tries < MAX_CODE_TRIES:
        tries += 1
        cursor, ok = at + len(words[0]), True
        for word in words[1:]:
            nxt = text.find(word, cursor, cursor + 200)
            if nxt < 0:
                ok = False
                break
            cursor = nxt + len(word)
        if ok:
            return True
        at = text.find(words[0], at + 1)
    return False
