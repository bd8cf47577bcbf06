"""Where a proxied request goes, read from its raw path: the bytes as the client sent them.

The provider receives the raw path appended to its base; routes are judged by the path's
decoding. The two must name the same place, so a path whose shape decoding or a URL
library would change is refused: a `.` or `..` segment (httpx resolves them, and
`/v1/../../admin` reached the provider as `/admin`), an encoded `/`, `\\` or `.` (`%2f`
passed the `/v1/` check as one segment and reached the provider as several), a `\\`, and
any byte outside printable ASCII (a client percent-encodes those; httpx would re-encode
them). An upstream's name is cut from the raw path by its raw bytes, never by its decoded
length (`/u/%61/...` for `a` once cut the request into another port).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

REFUSED = "the path has a dot segment, an encoded '/', '\\' or '.', or a byte outside ASCII"
OUTSIDE = "the proxy serves the providers' /v1/ paths only"
_ENCODED = re.compile(rb"%(?:2[eEfF]|5[cC])")
_PRINTABLE = re.compile(rb"^[\x21-\x7e]*$")
_UPSTREAM = b"/u/"


@dataclass(frozen=True)
class ProxyPath:
    """A path the proxy serves: the upstream it names (`/u/{name}/...`), the provider's
    path decoded (`/v1/...`, what routes are judged by), and as sent (what is forwarded)."""

    upstream: str | None
    path: str
    raw: str


def read_path(raw: bytes) -> ProxyPath | str:
    """The route in `raw` (a request's raw path, without its query), or why it has none."""
    if not raw.startswith(b"/") or b"\\" in raw or not _PRINTABLE.match(raw):
        return REFUSED
    if _ENCODED.search(raw) or any(s in (b".", b"..") for s in raw.split(b"/")):
        return REFUSED
    upstream = None
    if raw.startswith(_UPSTREAM):
        name, slash, rest = raw[len(_UPSTREAM) :].partition(b"/")
        upstream = _decoded(name)
        if upstream is None:
            return REFUSED
        raw = slash + rest
    path = _decoded(raw)
    if path is None:
        return REFUSED
    if not (path == "/v1" or path.startswith("/v1/")):
        return OUTSIDE
    return ProxyPath(upstream, path, raw.decode("ascii"))


def _decoded(raw: bytes) -> str | None:
    """`raw` percent-decoded as UTF-8; None when that is not UTF-8."""
    try:
        return unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None
