"""The provider's count read from its answers, as the providers stream and send them."""

from __future__ import annotations

import orjson

from app.core.proxy.usage import Usage, UsageTap, usage_of

ANTHROPIC_STREAM = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":12,'
    b'"cache_creation_input_tokens":100,"cache_read_input_tokens":3000,"output_tokens":1}}}\n\n'
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"usage"}}\n\n'
    b"event: message_delta\n"
    b'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
    b'"usage":{"output_tokens":42}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def _fed(data: bytes, streaming: bool, size: int) -> Usage | None:
    tap = UsageTap(streaming)
    for start in range(0, len(data), size):
        tap.feed(data[start : start + size])
    return tap.finish()


def test_an_anthropic_stream_gives_all_input_read_and_the_last_output_count() -> None:
    for size in (1, 7, 64, len(ANTHROPIC_STREAM)):
        assert _fed(ANTHROPIC_STREAM, True, size) == Usage(3112, 3000, 42)


def test_an_openai_stream_s_usage_chunk_is_read_when_there_is_one() -> None:
    chunks = [
        {"choices": [{"delta": {"content": "hi"}}], "usage": None},
        {
            "choices": [],
            "usage": {
                "prompt_tokens": 5000,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": 4096},
            },
        },
    ]
    stream = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    assert _fed(stream, True, 5) == Usage(5000, 4096, 7)
    without = b"data: " + orjson.dumps(chunks[0]) + b"\n\ndata: [DONE]\n\n"
    assert _fed(without, True, 5) is None


def test_json_answers_of_each_api_are_read() -> None:
    anthropic = {"usage": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 3}}
    chat = {"usage": {"prompt_tokens": 9, "completion_tokens": 2}}
    responses = {
        "usage": {
            "input_tokens": 8,
            "input_tokens_details": {"cached_tokens": 4},
            "output_tokens": 1,
        }
    }
    assert _fed(orjson.dumps(anthropic), False, 3) == Usage(15, 5, 3)
    assert _fed(orjson.dumps(chat), False, 3) == Usage(9, 0, 2)
    assert _fed(orjson.dumps(responses), False, 3) == Usage(8, 4, 1)


def test_a_responses_stream_s_completed_event_carries_the_usage() -> None:
    event = {
        "type": "response.completed",
        "response": {
            "usage": {
                "input_tokens": 70,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 3,
            }
        },
    }
    assert usage_of(event) == Usage(70, 0, 3)
    stream = b"event: response.completed\ndata: " + orjson.dumps(event) + b"\n\n"
    assert _fed(stream, True, 11) == Usage(70, 0, 3)


def test_what_is_not_json_or_has_no_usage_gives_none() -> None:
    assert _fed(b"<html>", False, 2) is None
    assert _fed(b'{"id": "x"}', False, 2) is None
    assert _fed(b"data: {not json usage}\n\n", True, 2) is None
