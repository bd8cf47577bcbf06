"""What images and PDFs cost, by the providers' documented rules, from their own bytes.

A base64 payload says nothing about its token cost (a screenshot's base64 is hundreds of
thousands of cl100k tokens; the provider bills it by its pixels). So an image is measured
from its header (PNG, JPEG, GIF, WebP keep their width and height in the first bytes: no
image library), and a PDF by its pages (`/Type /Page` objects, in compressed object
streams too). What cannot be read (a URL, a file id, bytes in another format) costs the
most its kind can: an undercount is an overflow waiting to happen.

- Anthropic: an image costs `width x height / 750` tokens after the provider's own
  downscale (a long edge over 1,568 px, or over about 1,600 tokens, is scaled down).
- OpenAI: `detail: low` costs 85; `high` and `auto` (read as high) cost 85 plus 170 per
  512 px tile of the image fitted into 2048 x 2048, then scaled to a 768 px short side.
- A PDF page is sent as its text and its image: the most a page image costs, plus the
  upper end of Anthropic's documented text cost of a page.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
import zlib
from collections.abc import Mapping
from math import ceil
from typing import Any

ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_IMAGE_MAX_TOKENS = 1600
OPENAI_LOW_DETAIL_TOKENS = 85
OPENAI_BASE_TOKENS = 85
OPENAI_TILE_TOKENS = 170
# 768 x 2048 after scaling: 2 x 4 tiles, the most a high-detail image can take.
OPENAI_IMAGE_MAX_TOKENS = OPENAI_BASE_TOKENS + 8 * OPENAI_TILE_TOKENS
PDF_PAGE_TEXT_TOKENS = 3000
PDF_PAGE_TOKENS = ANTHROPIC_IMAGE_MAX_TOKENS + PDF_PAGE_TEXT_TOKENS

_HEAD_BYTES = 64 * 1024  # a JPEG's size may follow a large EXIF block: then all is read
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
_COUNT = re.compile(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages\b")
_STREAM = re.compile(rb"stream\r?\n")


def decode_base64(data: str, limit: int | None = None) -> bytes | None:
    """The bytes of base64 `data` (a `data:` URL's too), at most about `limit` of them;
    None when it is no base64."""
    if data.startswith("data:"):
        data = data.partition(",")[2]
    if limit is not None:
        data = data[: (limit // 3 + 1) * 4]
    try:
        return base64.b64decode(data + "=" * (-len(data) % 4))
    except (binascii.Error, ValueError):
        return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a PNG, GIF, WebP or JPEG header; None for anything else."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        return _pair(struct.unpack(">II", data[16:24]))
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return _pair(struct.unpack("<HH", data[6:10]))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp_size(data)
    if data[:2] == b"\xff\xd8":
        return _jpeg_size(data)
    return None


def image_size_of_base64(data: str) -> tuple[int, int] | None:
    """The size of a base64 image, reading its head first and all of it only if needed."""
    head = decode_base64(data, _HEAD_BYTES)
    if head is None:
        return None
    size = image_size(head)
    if size is None and head[:2] == b"\xff\xd8" and len(data) > _HEAD_BYTES:
        whole = decode_base64(data)
        size = image_size(whole) if whole is not None else None
    return size


def _pair(values: tuple[int, ...]) -> tuple[int, int] | None:
    width, height = values[0], values[1]
    return (width, height) if width > 0 and height > 0 else None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return _pair((width & 0x3FFF, height & 0x3FFF))
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """The frame size of a JPEG: walk its segments to a start-of-frame marker."""
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return _pair((width, height))
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        at += 2 + struct.unpack(">H", data[at + 2 : at + 4])[0]
    return None


def anthropic_image_tokens(size: tuple[int, int] | None) -> int:
    """Anthropic's cost of an image of `size` (the most an image costs when unknown)."""
    if size is None:
        return ANTHROPIC_IMAGE_MAX_TOKENS
    width, height = size
    scale = min(1.0, ANTHROPIC_MAX_EDGE / max(width, height))
    tokens = ceil(round(width * height * scale * scale / ANTHROPIC_PIXELS_PER_TOKEN, 6))
    return min(ANTHROPIC_IMAGE_MAX_TOKENS, tokens)


def openai_image_tokens(size: tuple[int, int] | None, detail: object) -> int:
    """OpenAI's cost of an image of `size` at `detail` (`auto` and unknown read as high)."""
    if detail == "low":
        return OPENAI_LOW_DETAIL_TOKENS
    if size is None:
        return OPENAI_IMAGE_MAX_TOKENS
    width, height = float(size[0]), float(size[1])
    fit = min(1.0, 2048 / max(width, height))
    width, height = width * fit, height * fit
    short = 768 / min(width, height)
    width, height = width * short, height * short
    tiles = ceil(round(width, 6) / 512) * ceil(round(height, 6) / 512)
    return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * tiles


def pdf_pages(data: bytes) -> int:
    """The pages of a PDF: its `/Type /Page` objects (in compressed object streams too),
    and no fewer than its page tree's largest `/Count`; 1 when none can be found."""
    pages = len(_PAGE.findall(data))
    counts = [int(a or b) for a, b in _COUNT.findall(data)]
    if not pages:
        for stream in _streams(data):
            pages += len(_PAGE.findall(stream))
            counts += [int(a or b) for a, b in _COUNT.findall(stream)]
    return max(1, pages, *counts)


def _streams(data: bytes) -> list[bytes]:
    """The inflated content of each Flate stream of a PDF that inflates."""
    inflated: list[bytes] = []
    for match in _STREAM.finditer(data):
        end = data.find(b"endstream", match.end())
        if end < 0:
            break
        try:
            inflated.append(zlib.decompressobj().decompress(data[match.end() : end]))
        except zlib.error:
            continue
    return inflated


def pdf_tokens(data: bytes | None) -> int:
    """What a PDF costs: `PDF_PAGE_TOKENS` per page (one page when unreadable)."""
    return PDF_PAGE_TOKENS * (pdf_pages(data) if data is not None else 1)


MEDIA_PLACEHOLDER = "[media]"  # what a count reads for a media block's payload
# OpenAI's image and file parts, in Chat Completions and Responses bodies.
IMAGE_PART_TYPES = frozenset({"image_url", "input_image"})
FILE_PART_TYPES = frozenset({"file", "input_file"})


def source_size(source: Mapping[str, Any]) -> tuple[int, int] | None:
    """The size of an Anthropic image `source` sent as base64 (None for a URL or a file)."""
    data = source.get("data")
    if source.get("type") != "base64" or not isinstance(data, str):
        return None
    return image_size_of_base64(data)


def document_text(source: Mapping[str, Any]) -> str | None:
    """An Anthropic document `source`'s text when it is sent as text or content blocks
    (it costs its text), else None (a PDF)."""
    kind, data = source.get("type"), source.get("data")
    if kind == "text" and isinstance(data, str):
        return data
    if kind == "content" and isinstance(content := source.get("content"), list):
        blocks = [b for b in content if isinstance(b, Mapping)]
        return "\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
    return None


def pdf_source_tokens(source: Mapping[str, Any]) -> int:
    """An Anthropic document `source` sent as a PDF: its pages when base64, one page when
    sent by URL or file id."""
    data = source.get("data")
    if source.get("type") == "base64" and isinstance(data, str):
        return pdf_tokens(decode_base64(data))
    return PDF_PAGE_TOKENS


def openai_image_part_tokens(part: Mapping[str, Any]) -> int:
    """An `image_url` part (`{"image_url": {"url", "detail"}}`) or a Responses
    `input_image` (`{"image_url": url, "detail"}`)."""
    image = part.get("image_url")
    if isinstance(image, Mapping):
        url, detail = image.get("url"), image.get("detail")
    else:
        url, detail = image, part.get("detail")
    size = image_size_of_base64(url) if isinstance(url, str) and url.startswith("data:") else None
    return openai_image_tokens(size, detail)


def openai_file_part_tokens(part: Mapping[str, Any]) -> int:
    """A `file` part (`{"file": {"file_data"}}`) or a Responses `input_file`
    (`{"file_data"}`): its pages, one when it is sent by id."""
    file = part.get("file")
    data = (file if isinstance(file, Mapping) else part).get("file_data")
    return pdf_tokens(decode_base64(data)) if isinstance(data, str) else PDF_PAGE_TOKENS


def media_tokens(block: Mapping[str, Any]) -> int | None:
    """What a media block costs as its JSON says it (any dialect): an Anthropic `image`, a
    `document` sent as a PDF (base64, a URL or a file), an OpenAI image or file part; None
    for any other block (a document given as text costs its text)."""
    kind = block.get("type")
    source = block.get("source")
    if kind == "image" and isinstance(source, Mapping):
        return anthropic_image_tokens(source_size(source))
    if kind == "document" and isinstance(source, Mapping):
        return None if document_text(source) is not None else pdf_source_tokens(source)
    if kind in IMAGE_PART_TYPES:
        return openai_image_part_tokens(block)
    if kind == "input_file" or (kind == "file" and isinstance(block.get("file"), Mapping)):
        return openai_file_part_tokens(block)
    return None
