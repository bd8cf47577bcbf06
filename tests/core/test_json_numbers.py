"""Numbers read and written as they were sent (app/core/json_numbers.py)."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.json_numbers import (
    MAX_NUMBER_CHARS,
    LiteralFloat,
    LiteralInt,
    NumberTooLongError,
    dumps,
    loads,
    may_alter_numbers,
)
from app.core.tokens import count_messages
from tests.builders import parse
from tests.fakes.tokenizer import WordTokenizer

# Every JSON number, spelled every way the grammar allows.
NUMBER = st.from_regex(
    r"-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][+-]?[0-9]{1,4})?", fullmatch=True
)


def document_with(literals: list[str]) -> bytes:
    items = ",".join(f'{{"n":{n},"list":[ {n} ,{n}]}}' for n in literals)
    return f'{{"messages":[{items}],"threshold":0.5}}'.encode()


@pytest.mark.slow
@given(st.lists(NUMBER, min_size=1, max_size=5))
def test_every_number_is_written_back_exactly_as_it_was_read(literals: list[str]) -> None:
    text = document_with(literals)
    document, _ = loads(text)
    assert dumps(document) == text.replace(b"[ ", b"[").replace(b" ,", b",")


@pytest.mark.slow
@given(NUMBER)
def test_a_kept_number_has_the_value_json_reads(literal: str) -> None:
    document, _ = loads(document_with([literal]))
    value = document["messages"][0]["n"]
    expected = json.loads(literal)
    assert value == expected or (value != value and expected != expected)
    assert type(value) in (int, float, LiteralInt, LiteralFloat)


@pytest.mark.parametrize(
    ("literal", "kept"),
    [
        ("123456789012345678901", LiteralInt),
        ("-9223372036854775809", LiteralInt),
        ("-0", LiteralInt),
        ("1e309", LiteralFloat),
        ("1e-400", LiteralFloat),
        ("1E+2", LiteralFloat),
        ("-0.0", float),
        ("1.5", float),
        ("18446744073709551615", int),
        ("-9223372036854775808", int),
        ("0", int),
    ],
)
def test_only_numbers_orjson_would_alter_carry_their_literal(literal: str, kept: type) -> None:
    document, _ = loads(document_with([literal]))
    assert type(document["messages"][0]["n"]) is kept


def test_the_fast_path_is_kept_for_plain_numbers_and_floats_outside_the_messages() -> None:
    text = b'{"messages":[{"n":1,"m":[0,-1,18446744073709551615]}],"threshold":0.5}'
    document, accepted = loads(text)
    assert accepted is True
    assert not may_alter_numbers(text, document)
    assert may_alter_numbers(b'{"messages":[{"n":-0}]}', {"messages": [{"n": 0}]})
    assert may_alter_numbers(b'{"messages":[{"n":1.5}]}', {"messages": [{"n": 1.5}]})


def test_what_orjson_refuses_is_read_by_json_and_says_so() -> None:
    document, accepted = loads(b'{"messages":[{"n":1e309,"x":NaN}]}')
    assert accepted is False
    assert dumps(document) == b'{"messages":[{"n":1e309,"x":null}]}'


@pytest.mark.parametrize(
    ("text", "path"),
    [
        (b'{"messages":[{"a":{"b":[1,%s]}}]}', "messages[0].a.b[1]"),
        (b'{"messages":[],"context_window":%s}', "context_window"),
        (b"[%s]", "[0]"),
    ],
)
def test_an_over_long_number_is_refused_with_its_place(text: bytes, path: str) -> None:
    with pytest.raises(NumberTooLongError) as refused:
        loads(text % (b"7" * (MAX_NUMBER_CHARS + 1)))
    assert refused.value.path == path
    assert str(refused.value) == (
        f"a number of {MAX_NUMBER_CHARS + 1} characters; at most {MAX_NUMBER_CHARS} are accepted"
    )


def test_a_kept_number_survives_copies_and_pickling() -> None:
    for number in (LiteralInt(0, "-0"), LiteralFloat(float("inf"), "1e309")):
        for again in (copy.copy(number), copy.deepcopy(number), pickle.loads(pickle.dumps(number))):
            assert (type(again), again.literal, again) == (type(number), number.literal, number)


def test_sorted_keys_and_subclasses_of_builtins_are_written_as_orjson_writes_them() -> None:
    class Name(str):
        pass

    value: dict[str, Any] = {"b": LiteralInt(10**20), "a": [Name("x"), LiteralFloat(0.0, "0e0")]}
    assert dumps(value, sort_keys=True) == b'{"a":["x",0e0],"b":100000000000000000000}'
    assert dumps({"a": 1.5}) == orjson.dumps({"a": 1.5})


def test_a_messages_token_count_does_not_depend_on_a_kept_literal() -> None:
    tokenizer = WordTokenizer()

    def counted(literal: str) -> int:
        document, _ = loads(
            f'[{{"role":"user","content":[{{"type":"tool_use","id":"t","name":"f",'
            f'"input":{{"x":{literal}}}}}]}}]'.encode()
        )
        return sum(count_messages(tokenizer, parse(document)))

    assert counted("1E+2") == counted("100.0")
    assert counted("-0") == counted("0")
