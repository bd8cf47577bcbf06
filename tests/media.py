"""Image and PDF bytes built in the tests: the few header bytes the counting reads, so a
test states the size or the page count it means."""

from __future__ import annotations

import base64
import struct
import zlib


def png(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr + b"\0\0\0\0"


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\0" * 8


def webp(width: int, height: int) -> bytes:
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\0" * 4
    size = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 30) + b"WEBP" + vp8x + size


def jpeg(width: int, height: int, exif: int = 0) -> bytes:
    """A JPEG head: an APP1 segment of `exif` bytes, then the frame header."""
    app1 = b"\xff\xe1" + struct.pack(">H", exif + 2) + b"\0" * exif
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\0" * 9
    return b"\xff\xd8" + app1 + sof + b"\xff\xd9"


def pdf(pages: int, *, compressed: bool = False) -> bytes:
    """A PDF of `pages` page objects, in an object stream when `compressed`."""
    objects = b"".join(
        b"%d 0 obj << /Type /Page /Parent 2 0 R >> endobj\n" % (i + 3) for i in range(pages)
    )
    tree = b"2 0 obj << /Type /Pages /Count %d >> endobj\n" % pages
    if compressed:
        stream = zlib.compress(tree + objects)
        body = b"4 0 obj << /Type /ObjStm /Filter /FlateDecode >> stream\n%s\nendstream" % stream
        return b"%PDF-1.7\n" + body + b"\n%%EOF\n"
    return b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" + tree + objects


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def png_base64(width: int, height: int) -> str:
    return b64(png(width, height))


def pdf_base64(pages: int) -> str:
    return b64(pdf(pages))
