"""The proxy's own count of a message reads a media block for what its provider bills it
(`media_tokens`), never its base64: a screenshot's payload is hundreds of thousands of
tokens as text, about 1,600 as an image."""

from __future__ import annotations

import os

import orjson

from app.core.provider import MEDIA_PLACEHOLDER, anthropic_image_tokens
from app.core.provider.media import PDF_PAGE_TOKENS, openai_image_tokens
from app.core.proxy import counted_json
from tests.media import b64, pdf, png

SCREENSHOT = b64(png(1280, 800) + os.urandom(300_000))


def _image(data: str) -> dict[str, object]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def test_an_image_is_counted_by_its_pixels_and_its_payload_left_out() -> None:
    message = {"role": "user", "content": [_image(SCREENSHOT), {"type": "text", "text": "this?"}]}
    text, media = counted_json("messages", message)
    assert media == anthropic_image_tokens((1280, 800))
    assert SCREENSHOT not in text
    assert orjson.loads(text)["content"][0]["source"]["data"] == MEDIA_PLACEHOLDER
    assert orjson.loads(text)["content"][1] == {"type": "text", "text": "this?"}


def test_an_image_in_a_tool_result_and_a_pdf_document_are_media_too() -> None:
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [_image(SCREENSHOT)]}
    document = {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf(3))},
    }
    text, media = counted_json("messages", {"role": "user", "content": [result, document]})
    assert media == anthropic_image_tokens((1280, 800)) + 3 * PDF_PAGE_TOKENS
    assert SCREENSHOT not in text


def test_openai_image_parts_are_counted_by_the_openai_rule() -> None:
    url = "data:image/png;base64," + SCREENSHOT
    chat = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
    responses = {"role": "user", "content": [{"type": "input_image", "image_url": url}]}
    for message in (chat, responses):
        text, media = counted_json("messages", message)
        assert media == openai_image_tokens((1280, 800), None)
        assert url not in text


def test_text_and_a_call_whose_arguments_say_file_are_read_as_they_are() -> None:
    call = {"type": "tool_use", "id": "t1", "name": "create", "input": {"type": "file"}}
    message = {"role": "assistant", "content": [call, {"type": "text", "text": "an image"}]}
    assert counted_json("messages", message) == (orjson.dumps(message).decode(), 0)
