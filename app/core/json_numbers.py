"""JSON numbers kept as they were sent.

orjson reads every number as a 64-bit int or a double: `123456789012345678901` becomes
`1.2345678901234568e+20`, `-0` becomes `0`, `1e-400` becomes `0.0`, and `1e309` is refused
(`json` reads it as `inf`, which orjson writes as `null`). Messages handed back unchanged
and archives must be what the agent sent, number for number, so a number whose value would
not be written back as its literal is read as a `LiteralInt` or `LiteralFloat`: the value
(for counting and comparing, as before) that remembers its literal, which `dumps` writes
verbatim.

`loads` keeps orjson's document unless it holds a number that may not come back as sent
(`may_alter_numbers`: a float, or a `-0` in the bytes); only then does `json` parse the
text again with hooks that see each literal. A literal longer than `MAX_NUMBER_CHARS` is
refused with where it sits (`NumberTooLongError`), before Python turns it into an int.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

MAX_NUMBER_CHARS = 1000

_INT64_MIN = -(2**63)
_UINT64_END = 2**64

# `-0` as a number token (a number in a document is always followed by `,`, `]` or `}`,
# JSON whitespace aside). Inside a string the same text may match too, which costs the
# slower parse, never a changed number.
_NEGATIVE_ZERO = re.compile(rb"-0[ \t\n\r]*[,\]}]")


class LiteralInt(int):
    """An integer that orjson cannot write as sent (`-0`, beyond 64 bits), with its literal."""

    literal: str

    def __new__(cls, value: int, literal: str = "") -> LiteralInt:
        number = super().__new__(cls, value)
        number.literal = literal or str(value)
        return number

    def __reduce__(self) -> tuple[type[LiteralInt], tuple[int, str]]:
        return LiteralInt, (int(self), self.literal)


class LiteralFloat(float):
    """A float whose literal orjson would not write back (`1e309`, `1E+2`, `1e-400`,
    more digits than a double holds), with that literal."""

    literal: str

    def __new__(cls, value: float, literal: str = "") -> LiteralFloat:
        number = super().__new__(cls, value)
        number.literal = literal or repr(value)
        return number

    def __reduce__(self) -> tuple[type[LiteralFloat], tuple[float, str]]:
        return LiteralFloat, (float(self), self.literal)


class NumberTooLongError(ValueError):
    """A number literal longer than the limit; `path` names it (`messages[3].content[0].x`)."""

    def __init__(self, path: str, length: int, limit: int) -> None:
        super().__init__(f"a number of {length} characters; at most {limit} are accepted")
        self.path = path


class _TooLong:
    """Stands in for an over-long literal until its place in the document is found."""

    def __init__(self, length: int) -> None:
        self.length = length


def may_alter_numbers(text: bytes, document: Any) -> bool:
    """Whether orjson's `document` of `text` may have altered a number that is handed back:
    any float in its `messages` (what comes back as sent and is archived; the whole document
    when it has none), whose literal may have been spelled otherwise or been an integer past
    64 bits, or an integer 0 anywhere that may have been sent as `-0`. A request's own
    settings (`threshold: 0.5`) keep the fast path."""
    if _NEGATIVE_ZERO.search(text) is not None:
        return True
    handed_back = document.get("messages", document) if isinstance(document, dict) else document
    return _holds_float(handed_back)


def _holds_float(document: Any) -> bool:
    """Level by level, with no per-node calls: it runs on every JSON body."""
    if isinstance(document, float):
        return True
    level = [document] if isinstance(document, (dict, list)) else []
    while level:
        deeper: list[Any] = []
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                if isinstance(child, (dict, list)):
                    deeper.append(child)
                elif child.__class__ is float:
                    return True
        level = deeper
    return False


def loads(text: bytes, max_number_chars: int | None = MAX_NUMBER_CHARS) -> tuple[Any, bool]:
    """The document with its numbers as sent, and whether orjson accepted the text (else
    `json` took what orjson refuses: `NaN`, `1e309`, lone surrogates). Raises orjson's or
    json's decode errors, `RecursionError`, and `NumberTooLongError`."""
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if "recursion" in str(exc).lower():
            raise RecursionError(str(exc)) from None
        return loads_keeping_literals(text, max_number_chars), False
    if may_alter_numbers(text, document):
        return loads_keeping_literals(text, max_number_chars), True
    return document, True


def loads_keeping_literals(text: bytes | str, max_number_chars: int | None) -> Any:
    """`json.loads`, each number that orjson would not write back as sent kept with its
    literal."""
    too_long: list[_TooLong] = []

    def guarded(read: Callable[[str], Any]) -> Callable[[str], Any]:
        def hook(literal: str) -> Any:
            if max_number_chars is not None and len(literal) > max_number_chars:
                too_long.append(_TooLong(len(literal)))
                return too_long[-1]
            return read(literal)

        return hook

    document = json.loads(text, parse_int=guarded(_int), parse_float=guarded(_float))
    if too_long and max_number_chars is not None:
        path = _path_of(document, too_long[0]) or "body"
        raise NumberTooLongError(path, too_long[0].length, max_number_chars)
    return document


def _int(literal: str) -> int:
    value = int(literal)
    if literal == "-0" or not _INT64_MIN <= value < _UINT64_END:
        return LiteralInt(value, literal)
    return value


def _float(literal: str) -> float:
    value = float(literal)
    if orjson.dumps(value) == literal.encode():
        return value
    return LiteralFloat(value, literal)


def _path_of(document: Any, target: object) -> str | None:
    """Where `target` sits in `document`, as `messages[0].content[1].input.a`."""
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if isinstance(node, dict):
            children = [(v, f"{path}.{k}" if path else str(k)) for k, v in node.items()]
        elif isinstance(node, list):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(node)]
        else:
            continue
        stack.extend(reversed(children))
    return None


def _literal(value: Any) -> Any:
    """orjson's `default`: a kept literal verbatim; the subclasses orjson passes through
    (`OPT_PASSTHROUGH_SUBCLASS`) as their base type."""
    if isinstance(value, (LiteralInt, LiteralFloat)):
        return orjson.Fragment(value.literal.encode())
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


_PLAIN = orjson.OPT_PASSTHROUGH_SUBCLASS
_SORTED = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_SORT_KEYS


def dumps(value: Any, *, sort_keys: bool = False, indent: bool = False) -> bytes:
    """orjson's JSON of `value`, each kept number written as its literal (indented by two
    spaces with `indent`). Raises `orjson.JSONEncodeError` for what is not JSON."""
    option = _SORTED if sort_keys else _PLAIN
    return orjson.dumps(value, default=_literal, option=option | orjson.OPT_INDENT_2 * indent)
