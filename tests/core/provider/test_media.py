from __future__ import annotations

import pytest

from app.core.provider.media import (
    ANTHROPIC_IMAGE_MAX_TOKENS,
    OPENAI_IMAGE_MAX_TOKENS,
    anthropic_image_tokens,
    image_size,
    image_size_of_base64,
    openai_image_tokens,
    pdf_pages,
)
from tests.media import b64, gif, jpeg, pdf, png, webp


@pytest.mark.parametrize("make", [png, gif, webp, jpeg])
def test_an_image_s_size_is_read_from_its_header(make: object) -> None:
    assert callable(make)
    assert image_size(make(1366, 639)) == (1366, 639)


def test_a_jpeg_s_size_after_a_large_exif_block_is_found() -> None:
    assert image_size_of_base64(b64(jpeg(800, 600, exif=65_000))) == (800, 600)


@pytest.mark.parametrize("data", [b"", b"not an image", b"\xff\xd8\xff"])
def test_bytes_that_are_no_known_image_have_no_size(data: bytes) -> None:
    assert image_size(data) is None


def test_a_data_url_is_read_like_its_base64() -> None:
    assert image_size_of_base64("data:image/png;base64," + b64(png(20, 10))) == (20, 10)


@pytest.mark.parametrize(
    ("size", "tokens"),
    [
        ((600, 400), 320),  # 240,000 / 750
        ((200, 200), 54),  # rounded up
        ((1092, 1092), 1590),
        ((3000, 3000), ANTHROPIC_IMAGE_MAX_TOKENS),  # scaled down by the provider first
        ((4000, 300), 246),  # long edge to 1568: 1568 x 117.6
        (None, ANTHROPIC_IMAGE_MAX_TOKENS),
    ],
)
def test_an_anthropic_image_costs_its_pixels_over_750(
    size: tuple[int, int] | None, tokens: int
) -> None:
    assert anthropic_image_tokens(size) == tokens


@pytest.mark.parametrize(
    ("size", "detail", "tokens"),
    [
        ((1024, 1024), "high", 765),  # OpenAI's own example: 768 x 768, 4 tiles
        ((2048, 4096), "high", 1105),  # 1024 x 2048, then 768 x 1536: 6 tiles
        ((4096, 8192), "auto", 1105),
        ((4096, 8192), "low", 85),
        (None, "high", OPENAI_IMAGE_MAX_TOKENS),
        (None, None, OPENAI_IMAGE_MAX_TOKENS),
    ],
)
def test_an_openai_image_costs_its_tiles_by_detail(
    size: tuple[int, int] | None, detail: str | None, tokens: int
) -> None:
    assert openai_image_tokens(size, detail) == tokens


@pytest.mark.parametrize("pages", [1, 2, 40])
def test_a_pdf_s_pages_are_counted_from_its_page_objects(pages: int) -> None:
    assert pdf_pages(pdf(pages)) == pages


def test_pages_in_a_compressed_object_stream_are_found() -> None:
    assert pdf_pages(pdf(12, compressed=True)) == 12


def test_a_page_tree_that_counts_more_pages_than_are_seen_is_believed() -> None:
    data = pdf(2).replace(b"/Count 2", b"/Count 9")
    assert pdf_pages(data) == 9


def test_bytes_that_are_no_pdf_count_as_one_page() -> None:
    assert pdf_pages(b"plain text") == 1
