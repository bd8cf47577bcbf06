"""The usage tap on the relay: an answer's bytes decoded for `UsageTap` as they are
forwarded, and never a reason to stop forwarding them.

A body the tap could not decode (raw deflate sent as `deflate`, a corrupt gzip) once
ended the relay with an empty 200; now the tap stops and the bytes go on as they came.
Raw deflate (no zlib header, as some servers send `deflate`) is read too. Inflating is
bounded per chunk, so a chunk that inflates to a flood stops the tap, not the process.
"""

from __future__ import annotations

import logging
import zlib

from app.core.ports import RawHeaders
from app.core.proxy import Usage, UsageTap
from app.proxy.headers import lower_map

log = logging.getLogger("context_compact.proxy")

MAX_INFLATED = 16 << 20  # bytes one chunk may inflate to before the tap gives up


class Tap:
    """`UsageTap` over the answer's encoding; `stopped` once it could not read it."""

    def __init__(self, encoding: str, streaming: bool) -> None:
        self._encoding = encoding
        self._usage = UsageTap(streaming)
        self._inflate = _inflater(encoding)
        # Compressed bytes fed before any came out (None after): retried as raw deflate.
        self._unread: bytes | None = b""
        self.stopped = False

    @classmethod
    def of(cls, headers: RawHeaders) -> Tap | None:
        """A tap for an answer with `headers`: plain, gzip or deflate; None for any other
        encoding (brotli, zstd: not tapped)."""
        named = lower_map(headers)
        encoding = named.get("content-encoding", "identity").strip().lower() or "identity"
        if encoding not in ("identity", "gzip", "deflate"):
            return None
        return cls(encoding, named.get("content-type", "").startswith("text/event-stream"))

    def feed(self, chunk: bytes) -> None:
        if self.stopped:
            return
        try:
            self._usage.feed(self._decoded(chunk))
        except Exception as exc:  # the relay goes on whatever the tap meets
            self._stop(exc)

    def finish(self) -> Usage | None:
        if self.stopped:
            return None
        try:
            return self._usage.finish()
        except Exception as exc:
            self._stop(exc)
            return None

    def _decoded(self, chunk: bytes) -> bytes:
        if self._inflate is None:
            return chunk
        try:
            out = self._inflated(self._inflate, chunk)
        except zlib.error:
            if self._encoding != "deflate" or self._unread is None:
                raise
            self._inflate = _inflater("raw")
            assert self._inflate is not None
            chunk, self._unread = self._unread + chunk, b""
            out = self._inflated(self._inflate, chunk)
        if self._unread is not None:
            self._unread = None if out else self._unread + chunk
        return out

    @staticmethod
    def _inflated(inflate: zlib._Decompress, chunk: bytes) -> bytes:
        out = inflate.decompress(chunk, MAX_INFLATED)
        if inflate.unconsumed_tail:
            raise ValueError(f"a chunk inflates past {MAX_INFLATED} bytes")
        return out

    def _stop(self, exc: Exception) -> None:
        self.stopped = True
        log.info("the answer's usage cannot be read; relayed as it came: %s", type(exc).__name__)


def _inflater(encoding: str) -> zlib._Decompress | None:
    if encoding in ("gzip", "deflate"):
        return zlib.decompressobj(zlib.MAX_WBITS | 32)  # a gzip or zlib header, detected
    if encoding == "raw":
        return zlib.decompressobj(-zlib.MAX_WBITS)
    return None
