import json

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.compact_json import compact_json
from app.core.provider.dialects import from_openai
from app.core.provider.media import ANTHROPIC_IMAGE_MAX_TOKENS, PDF_PAGE_TOKENS
from app.core.tokens import (
    MESSAGE_OVERHEAD,
    count_messages,
    count_text,
    count_total,
)
from tests.builders import assistant, parse, tool_result, tool_use, user
from tests.media import pdf_base64, png_base64


def test_empty_list_counts_zero(tokenizer: TiktokenTokenizer) -> None:
    assert count_total(tokenizer, []) == 0


def test_count_is_the_sum_of_the_messages_each_with_the_recipe_s_overhead(
    tokenizer: TiktokenTokenizer,
) -> None:
    messages = parse([user("hello world"), assistant("hi there")])
    each = count_messages(tokenizer, messages)
    assert each == [
        tokenizer.count("user\nhello world") + MESSAGE_OVERHEAD,
        tokenizer.count("assistant\nhi there") + MESSAGE_OVERHEAD,
    ]
    assert count_total(tokenizer, messages) == sum(each)


def test_string_content_and_one_text_block_count_the_same(tokenizer: TiktokenTokenizer) -> None:
    as_string = parse([{"role": "user", "content": "same text"}])
    as_block = parse([{"role": "user", "content": [{"type": "text", "text": "same text"}]}])
    assert count_total(tokenizer, as_string) == count_total(tokenizer, as_block)


def test_a_tool_call_counts_its_name_and_its_input_as_sdks_send_it() -> None:
    (message,) = parse([assistant(tool_use("read_file", "t1", path="a.py", limit=3))])
    assert count_text(message) == (
        'assistant\nread_file\n{"path": "a.py", "limit": 3}',
        2 * MESSAGE_OVERHEAD,
    )


def test_an_openai_call_counts_its_arguments_string_as_sent() -> None:
    sent = '{\n  "limit": 3,\n  "path": "a.py"\n}'
    call = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": sent}}
    (message,) = from_openai([{"role": "assistant", "content": None, "tool_calls": [call]}])
    assert count_text(message)[0] == f"assistant\nread_file\n{sent}"


def test_tool_result_counts_the_id_it_answers_and_its_content() -> None:
    (message,) = parse([tool_result("t1", "file body")])
    assert count_text(message) == ("user\nt1\nfile body", 2 * MESSAGE_OVERHEAD)


def test_an_image_costs_its_pixels_not_its_base64(tokenizer: TiktokenTokenizer) -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png_base64(600, 400)},
    }
    (message,) = parse([{"role": "user", "content": [image]}])
    assert count_total(tokenizer, [message]) == (
        tokenizer.count("user\n[media]") + MESSAGE_OVERHEAD + 320
    )


def test_an_image_by_url_costs_the_most_an_image_can() -> None:
    image = {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}}
    (message,) = parse([{"role": "user", "content": [image]}])
    assert count_text(message)[1] == MESSAGE_OVERHEAD + ANTHROPIC_IMAGE_MAX_TOKENS


def test_a_pdf_document_costs_its_pages() -> None:
    document = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": pdf_base64(40)},
    }
    (message,) = parse([{"role": "user", "content": [document]}])
    assert count_text(message)[1] == MESSAGE_OVERHEAD + 40 * PDF_PAGE_TOKENS


def test_a_text_document_costs_its_text() -> None:
    source = {"type": "text", "media_type": "text/plain", "data": "the whole text"}
    (message,) = parse([{"role": "user", "content": [{"type": "document", "source": source}]}])
    assert count_text(message) == ("user\nthe whole text", MESSAGE_OVERHEAD)


def test_an_openai_pdf_file_part_costs_its_pages() -> None:
    data = "data:application/pdf;base64," + pdf_base64(3)
    part = {"type": "file", "file": {"filename": "a.pdf", "file_data": data}}
    (message,) = from_openai([{"role": "user", "content": [part]}])
    assert count_text(message)[1] == MESSAGE_OVERHEAD + 3 * PDF_PAGE_TOKENS


def test_an_openai_image_part_costs_its_tiles_by_detail() -> None:
    url = "data:image/png;base64," + png_base64(1024, 1024)
    high = {"type": "image_url", "image_url": {"url": url, "detail": "high"}}
    low = {"type": "image_url", "image_url": {"url": url, "detail": "low"}}
    (message,) = from_openai([{"role": "user", "content": [high, low]}])
    assert count_text(message)[1] == MESSAGE_OVERHEAD + 765 + 85


def test_unknown_block_counts_from_its_json() -> None:
    (message,) = parse([{"role": "assistant", "content": [{"type": "server_tool_use", "b": 1}]}])
    assert count_text(message) == ('assistant\n{"b":1,"type":"server_tool_use"}', MESSAGE_OVERHEAD)


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
