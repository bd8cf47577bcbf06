"""The transparent proxy (docs/proxy.md), an agent's SDK pointed at it: its port and host,
the providers behind it, its token, and the marks where it compacts."""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, SecretStr

UPSTREAM_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def named_and_http(value: dict[str, str]) -> dict[str, str]:
    """Upstreams are named plainly (they are part of a path) and reached over http(s)."""
    for name, url in value.items():
        if not UPSTREAM_NAME.fullmatch(name):
            raise ValueError(f"upstream name {name!r}: letters, digits, `-` and `_` only")
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise ValueError(f"upstream {name!r}: {url!r} is not an http(s) URL")
    return value


ProxyPort = Annotated[
    int | None,
    Field(
        None,
        gt=0,
        lt=65536,
        description=(
            "set: `context-compact serve` also listens on this port for the transparent "
            "proxy (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `base_url=`; docs/proxy.md); "
            "unset: no proxy"
        ),
    ),
]

ProxyHost = Annotated[str, Field("127.0.0.1", description="where the proxy listens")]

ProxyAnthropicUrl = Annotated[
    str,
    Field(
        "https://api.anthropic.com",
        description="the provider behind the proxy's Anthropic routes (`/v1/messages`, ...)",
    ),
]

ProxyOpenaiUrl = Annotated[
    str,
    Field(
        "https://api.openai.com",
        description="the provider behind the proxy's other `/v1/` routes",
    ),
]

ProxyUpstreams = Annotated[
    dict[str, str],
    AfterValidator(named_and_http),
    Field(
        default_factory=dict,
        description=(
            'more providers by name, as JSON (`{"local": "http://127.0.0.1:8000"}`), '
            "reached as `/u/{name}/v1/...`; upstreams come from here only, never from a "
            "request"
        ),
    ),
]

ProxyToken = Annotated[
    SecretStr | None,
    Field(
        None,
        description=(
            "when set, a proxied request needs it in `x-compact-proxy-token` (stripped "
            "before forwarding); never logged"
        ),
    ),
]

ProxyStart = Annotated[
    float,
    Field(
        0.7,
        gt=0,
        le=1,
        description="share of the request's limit where a background compaction starts",
    ),
]

ProxySplice = Annotated[
    float,
    Field(
        0.85,
        gt=0,
        le=1,
        description="share of the request's limit where a finished compaction is put in",
    ),
]

ProxyWaitSeconds = Annotated[
    float,
    Field(
        3.0,
        ge=0,
        description=(
            "over the limit, how long a request waits for a running compaction before one "
            "is made at once with the extractive summarizer"
        ),
    ),
]

ProxyPin = Annotated[
    float,
    Field(
        0.2,
        ge=0,
        lt=1,
        description=(
            "share of the request's limit the session's first messages may take, kept as "
            "sent ahead of every compacted head so the first request after a compaction "
            "reads them from the provider's cache (less, or none, when the session's "
            "turns need the room; 0: none)"
        ),
    ),
]
