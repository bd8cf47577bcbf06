import hashlib
from typing import Any

import orjson
import pytest

from app.core.sessions.ids import ID_PATTERN, archive_sha256, is_valid_id, new_archive_id


@pytest.mark.parametrize(
    "value",
    [
        "a",
        "A",
        "0",
        "abc-123",
        "session_42",
        "file.v2",
        "a.b.c",
        "a-",
        "a_",
        "a.",
        "x" * 128,
        "00000001700000000000-deadbeef",
    ],
)
def test_valid_ids_are_accepted(value: str) -> None:
    assert is_valid_id(value)


@pytest.mark.parametrize(
    "value",
    [
        "",
        ".",
        "..",
        "../x",
        "x/..",
        "a/b",
        "/abs",
        "a\\b",
        "..\\x",
        "a..b",
        "a..",
        "x" * 129,
        ".hidden",
        "-rf",
        "_x",
        "a b",
        "a\x00b",
        "a\n",
        "a\nb",
        "é",
        "café",
        "日本",
        "a\u2024b",  # one-dot leader, looks like "."
        "ａ",  # fullwidth a
    ],
)
def test_invalid_ids_are_refused(value: str) -> None:
    assert not is_valid_id(value)


def test_id_pattern_alone_still_needs_the_double_dot_rule() -> None:
    assert ID_PATTERN.match("a..b")
    assert not is_valid_id("a..b")


def test_non_string_is_refused() -> None:
    assert not is_valid_id(None)  # type: ignore[arg-type]
    assert not is_valid_id(b"abc")  # type: ignore[arg-type]


def test_new_archive_id_is_valid_and_shaped() -> None:
    archive_id = new_archive_id(1_700_000_000_123_456_789, "0123abcd")
    assert archive_id == "01700000000123456789-0123abcd"
    assert is_valid_id(archive_id)


def test_new_archive_ids_sort_by_time() -> None:
    times = [5, 1_000, 999, 10**18, 1_700_000_000_000_000_000, 42]
    ids = [new_archive_id(t, "ff") for t in times]
    assert sorted(ids) == [new_archive_id(t, "ff") for t in sorted(times)]


def test_new_archive_ids_sort_by_time_whatever_the_randomness() -> None:
    assert new_archive_id(1, "ffffffff") < new_archive_id(2, "00000000")


@pytest.mark.parametrize(
    ("now_ns", "random_hex"),
    [(-1, "ab"), (10**20, "ab"), (1, ""), (1, "xyz"), (1, "AB"), (1, "../"), (1, "a" * 108)],
)
def test_new_archive_id_rejects_bad_inputs(now_ns: int, random_hex: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        new_archive_id(now_ns, random_hex)


def test_new_archive_id_accepts_longest_randomness() -> None:
    archive_id = new_archive_id(1, "a" * 107)
    assert len(archive_id) == 128
    assert is_valid_id(archive_id)


def test_sha256_is_stable_across_key_order() -> None:
    a = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    b = [{"content": [{"text": "hi", "type": "text"}], "role": "user"}]
    assert archive_sha256(a) == archive_sha256(b)


def test_sha256_is_the_canonical_json_digest() -> None:
    messages = [{"role": "user", "content": "héllo"}]
    canonical = '[{"content":"héllo","role":"user"}]'.encode()
    assert archive_sha256(messages) == hashlib.sha256(canonical).hexdigest()


def test_sha256_changes_with_content_and_order() -> None:
    one = {"role": "user", "content": "1"}
    two = {"role": "assistant", "content": "2"}
    assert archive_sha256([one, two]) != archive_sha256([two, one])
    assert archive_sha256([one]) != archive_sha256([{"role": "user", "content": "2"}])


def test_sha256_of_empty_list() -> None:
    assert archive_sha256([]) == (
        "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
    )


def test_sha256_message_by_message_is_the_digest_of_the_whole_document() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "a", "z": [1, 2.5, None]},
        {"role": "assistant", "content": [{"type": "text", "text": "é\n"}], "n": float("nan")},
        {"b": {"y": 1, "x": 2}, "a": True},
    ]
    whole = orjson.dumps(messages, option=orjson.OPT_SORT_KEYS)
    assert archive_sha256(messages) == hashlib.sha256(whole).hexdigest()


def test_sha256_of_what_json_cannot_hold_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not serializable as JSON"):
        archive_sha256([{"role": "user", "content": "ok"}, {"x": {1, 2}}])
