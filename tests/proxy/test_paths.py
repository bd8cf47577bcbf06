"""Routes read from the raw path: dot segments and encoded `/`, `\\`, `.` refused with a
404 in the provider's shape, an upstream's name cut by its raw bytes, the proxy token
checked before any other answer; and through a real uvicorn and the real upstream client,
no trick reaches anything outside a configured upstream's base, nor gets a 5xx of ours."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from app.proxy.app import ProxyConfig
from app.proxy.paths import OUTSIDE, REFUSED
from tests.proxy.fakes import FakeUpstream
from tests.proxy.live import serve_proxy
from tests.proxy.test_app import CONFIG, proxy
from tests.proxy.wire import RawUpstream, asgi_call, raw_request

ANTHROPIC = [(b"x-api-key", b"sk-ant-test"), (b"anthropic-version", b"2023-06-01")]
TRICKS = [
    b"/v1/../../admin",
    b"/v1/..",
    b"/v1/./models",
    b"/v1/messages/../../u/local/v1/models",
    b"/v1%2f..%2f..%2fadmin",
    b"/v1%2F..%2F..%2Fadmin",
    b"/v1/%2e%2e/%2e%2e/admin",
    b"/v1/.%2E/admin",
    b"/v1/%2E/models",
    b"/v1\\..\\..\\admin",
    b"/v1%5c..%5cadmin",
    b"/v1/%5C/models",
    b"/%2e%2e/v1/models",
    b"/u/local/v1/../../escape",
    b"/u/pre/v1/../../escape",
    b"/u/local/../../v1/models",
    b"/u/lo%2fcal/v1/models",
    b"/u/..%2f/v1/models",
    b"/u/%ff/v1/models",
    b"/v1/caf\xc3\xa9",
    b"/v1/%ff%fe",
]


def _error(message: str) -> bytes:
    return orjson.dumps({"type": "error", "error": {"type": "not_found_error", "message": message}})


@pytest.mark.anyio
@pytest.mark.parametrize("target", TRICKS)
async def test_a_dot_segment_or_an_encoded_separator_is_a_404_and_nothing_is_sent(
    tokenizer: TiktokenTokenizer, target: bytes
) -> None:
    upstream = FakeUpstream()
    status, _, body = await asgi_call(proxy(upstream, tokenizer), target, ANTHROPIC)
    assert (status, body) == (404, _error(REFUSED))
    assert upstream.sent == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("target", "url"),
    [
        (b"/u/%6c%6f%63%61%6c/v1/models", "http://127.0.0.1:9/v1/models"),
        (b"/u/loc%61l/v1/models?x=%2F", "http://127.0.0.1:9/v1/models?x=%2F"),
        (b"/u/b%C3%A4se/v1/models", "http://127.0.0.1:18/pre/v1/models"),
        (b"/u/local/v1//models", "http://127.0.0.1:9/v1//models"),
        (b"/v1/files/a%20b", "https://anthropic.example/v1/files/a%20b"),
        (b"/%76%31/models", "https://anthropic.example/%76%31/models"),
    ],
)
async def test_an_upstream_s_name_is_cut_from_the_raw_path_by_its_raw_bytes(
    tokenizer: TiktokenTokenizer, target: bytes, url: str
) -> None:
    """`/u/%61/...` once cut the raw path by the decoded name's length: the request, key
    and all, went to another port."""
    config = ProxyConfig(
        anthropic_url=CONFIG.anthropic_url,
        upstreams={"local": "http://127.0.0.1:9", "bäse": "http://127.0.0.1:18/pre/"},
        secret=b"k",
    )
    upstream = FakeUpstream()
    status, _, _ = await asgi_call(proxy(upstream, tokenizer, config), target, ANTHROPIC)
    assert status == 200
    assert [s.url for s in upstream.sent] == [url]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("target", "message"),
    [
        (b"/u/elsewhere/v1/models", "no upstream named 'elsewhere' is configured"),
        (b"/u/local/v1/models", None),
        (b"/admin", OUTSIDE),
        (b"/v1/../admin", REFUSED),
    ],
)
async def test_the_token_is_checked_before_any_other_answer(
    tokenizer: TiktokenTokenizer, target: bytes, message: str | None
) -> None:
    """Without the token, a configured name and an unknown one get the same 401: which
    names are configured cannot be probed."""
    config = ProxyConfig(upstreams={"local": "http://127.0.0.1:9"}, secret=b"k", token="t0ken")
    upstream = FakeUpstream()
    app = proxy(upstream, tokenizer, config)
    refused = await asgi_call(app, target, ANTHROPIC)
    token = [*ANTHROPIC, (b"x-compact-proxy-token", b"t0ken")]
    status, _, body = await asgi_call(app, target, token)
    assert refused[0] == 401
    assert (
        orjson.loads(refused[2])["error"]["message"]
        == "missing or wrong x-compact-proxy-token header"
    )
    if message is None:
        assert status == 200
        assert [s.url for s in upstream.sent] == ["http://127.0.0.1:9/v1/models"]
    else:
        assert (status, orjson.loads(body)["error"]["message"]) == (404, message)
        assert upstream.sent == []


@pytest.mark.slow
def test_no_trick_reaches_outside_the_base_through_the_real_server_and_client(
    tmp_path: Path,
) -> None:
    """Every trick, sent byte for byte to the proxy served as `serve` serves it, and the
    allowed paths beside them: the provider sees only paths under its base, and the
    proxy answers each trick with its 404, never a 5xx (`/u/pre/v1/../../escape` reached
    `/escape`)."""
    allowed = [b"/u/pre/v1/models", b"/u/%70re/v1/models", b"/u/pre/v1//models?a=%2e"]
    with RawUpstream() as provider:
        upstreams = {"pre": provider.url + "/base", "local": provider.url + "/base"}
        with serve_proxy(provider.url + "/base", tmp_path, proxy_upstreams=upstreams) as live:
            tricks = [raw_request(live.proxy, t, ANTHROPIC) for t in TRICKS]
            fine = [raw_request(live.proxy, t, ANTHROPIC) for t in allowed]
    # uvicorn's parser refuses a raw byte outside ASCII itself (400), before the proxy
    assert [status for status, _, _ in tricks] == [400 if b"\xc3" in t else 404 for t in TRICKS]
    assert [status for status, _, _ in fine] == [200] * len(allowed)
    assert [s.target for s in provider.seen] == [
        b"/base/v1/models",
        b"/base/v1/models",
        b"/base/v1//models?a=%2e",
    ]
