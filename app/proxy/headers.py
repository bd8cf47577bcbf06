"""Which headers cross the proxy: all of them but a deny-list, both ways.

An allow-list drops what providers add every month (a beta's identification header
dropped made Anthropic answer 429 for the 1M-context beta behind a peer's gateway), so
only what belongs to one hop is dropped: the hop-by-hop headers of RFC 9110, section 7.6.1,
and the ones `Connection` names, `Host` and `Content-Length` (the next hop has its own), and on the
way in our own `x-compact-*` headers (the proxy's token among them: never forwarded).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from app.core.cost import SummarizerCost
from app.core.ports import RawHeaders

HOP_BY_HOP = frozenset(
    {
        b"connection", b"keep-alive", b"proxy-authenticate", b"proxy-authorization",
        b"proxy-connection", b"te", b"trailer", b"trailers", b"transfer-encoding", b"upgrade",
    }
)  # fmt: skip
NOT_FORWARDED = HOP_BY_HOP | {b"host", b"content-length"}
OURS = b"x-compact-"


def _named_by_connection(headers: Iterable[tuple[bytes, bytes]]) -> frozenset[bytes]:
    named = set()
    for name, value in headers:
        if name.lower() == b"connection":
            named |= {part.strip().lower() for part in value.split(b",") if part.strip()}
    return frozenset(named)


def request_headers(headers: RawHeaders) -> RawHeaders:
    """The client's headers to send the provider, in their order and case."""
    dropped = NOT_FORWARDED | _named_by_connection(headers)
    return [
        (name, value)
        for name, value in headers
        if (lower := name.lower()) not in dropped and not lower.startswith(OURS)
    ]


def response_headers(headers: RawHeaders) -> RawHeaders:
    """The provider's headers to send the client: all but the hop-by-hop ones (the body
    goes as it came, so its `content-length` and `content-encoding` still hold)."""
    dropped = HOP_BY_HOP | _named_by_connection(headers)
    return [(name, value) for name, value in headers if name.lower() not in dropped]


def lower_map(headers: RawHeaders) -> dict[str, str]:
    """The headers by lower-case name (the last of repeated ones), decoded as Latin-1."""
    return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in headers}


def ours(values: Mapping[str, str | int | None]) -> RawHeaders:
    """`x-compact-*` headers of the answer (those with a value), and no buffering by a
    reverse proxy in front (nginx honours `X-Accel-Buffering: no`)."""
    out: RawHeaders = [(b"x-accel-buffering", b"no")]
    for name, value in values.items():
        if value is not None and value != "":
            out.append((f"x-compact-{name}".encode(), str(value).encode("latin-1", "replace")))
    return out


def summarizer_headers(cost: SummarizerCost | None) -> dict[str, str | int | None]:
    """What the head a request put in cost, for its answer's `x-compact-summarizer-*`
    headers (none when it put no head in): the calls made for it, the answers reused, the
    tokens read and written, and the calls' time."""
    if cost is None:
        return {}
    return {
        "summarizer-calls": cost.calls,
        "summarizer-reused": cost.reused,
        "summarizer-input-tokens": cost.input_tokens,
        "summarizer-output-tokens": cost.output_tokens,
        "summarizer-ms": f"{cost.seconds * 1000:.0f}",
    }
