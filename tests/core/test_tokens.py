import json

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.compact_json import compact_json
from app.core.tokens import (
    MEDIA_TOKEN_ESTIMATE,
    count_messages,
    count_text,
    count_total,
)
from tests.builders import assistant, parse, tool_result, tool_use, user


def test_empty_list_counts_zero(tokenizer: TiktokenTokenizer) -> None:
    assert count_total(tokenizer, []) == 0


def test_count_is_the_sum_of_the_messages(tokenizer: TiktokenTokenizer) -> None:
    messages = parse([user("hello world"), assistant("hi there")])
    each = count_messages(tokenizer, messages)
    assert each == [tokenizer.count("user\nhello world"), tokenizer.count("assistant\nhi there")]
    assert count_total(tokenizer, messages) == sum(each)


def test_string_content_and_one_text_block_count_the_same(tokenizer: TiktokenTokenizer) -> None:
    as_string = parse([{"role": "user", "content": "same text"}])
    as_block = parse([{"role": "user", "content": [{"type": "text", "text": "same text"}]}])
    assert count_total(tokenizer, as_string) == count_total(tokenizer, as_block)


def test_tool_use_counts_name_and_sorted_compact_input() -> None:
    (message,) = parse([assistant(tool_use("read_file", "t1", path="a.py", limit=3))])
    assert count_text(message) == ('assistant\nread_file {"limit":3,"path":"a.py"}', 0)


def test_tool_result_counts_its_content() -> None:
    (message,) = parse([tool_result("t1", "file body")])
    assert count_text(message) == ("user\nfile body", 0)


def test_image_costs_a_fixed_estimate_not_its_base64(tokenizer: TiktokenTokenizer) -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "A" * 100_000},
    }
    (message,) = parse([{"role": "user", "content": [image]}])
    assert count_total(tokenizer, [message]) == tokenizer.count("user\n[media]") + (
        MEDIA_TOKEN_ESTIMATE
    )


def test_unknown_block_counts_from_its_json() -> None:
    (message,) = parse([{"role": "assistant", "content": [{"type": "server_tool_use", "b": 1}]}])
    assert count_text(message) == ('assistant\n{"b":1,"type":"server_tool_use"}', 0)


def test_endoftext_literal_is_counted_not_rejected(tokenizer: TiktokenTokenizer) -> None:
    messages = parse([user("before <|endoftext|> after")])
    assert count_total(tokenizer, messages) > 5


def test_large_batches_count_the_same_as_one_by_one(tokenizer: TiktokenTokenizer) -> None:
    texts = [f"line {i} " * 5000 for i in range(10)]  # over the threaded-batch cut-off
    assert tokenizer.count_batch(texts) == [tokenizer.count(t) for t in texts]


def test_compact_json_is_exactly_json_dumps_with_its_options() -> None:
    values = [
        {"b": [1, 2.5, None, True], "a": "héllo \n \u2028 \x7f", "c": {"z": 1e16, "y": -0.0}},
        {"n": float("nan"), "i": float("inf"), "big": 10**30},
        [],
        "plain",
    ]
    for value in values:
        expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert compact_json(value) == expected
