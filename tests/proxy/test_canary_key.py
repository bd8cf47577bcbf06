"""A canary key sent through the proxy, for a whole compacting session on the file stores:
found in no log record, metric, archive, record or any other file the service wrote, nor
in the session ids it answers with. (The PostgreSQL rows: tests/postgres.)"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from asgi_lifespan import LifespanManager

from app.api.parts import parts_of
from app.main import create_app
from app.proxy.app import ProxyApp
from app.settings import Settings
from tests.builders import rounds, user
from tests.proxy.fakes import FakeUpstream

pytestmark = pytest.mark.anyio

CANARY = "sk-ant-api03-CANARY-7c1e55d0b94f"
TOKEN = "proxy-token-CANARY-2b77"


def _body(last: int) -> bytes:
    messages = [user("Fix the parser build."), *rounds(1, last)[1:]]
    return orjson.dumps({"model": "canary-model", "max_tokens": 1000, "messages": messages})


@pytest.mark.slow
async def test_a_canary_key_is_found_nowhere_the_service_writes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(
        data_dir=str(tmp_path / "data"),
        workdir=str(tmp_path),
        proxy_port=8788,
        proxy_token=TOKEN,
        context_window=6000,
        log_level="debug",
    )
    app = create_app(settings)
    parts = parts_of(app)
    assert parts is not None
    assert isinstance(parts.proxy, ProxyApp)
    upstream = FakeUpstream()
    parts.proxy.upstream = upstream
    headers = {
        "authorization": f"Bearer {CANARY}",
        "x-api-key": CANARY,
        "anthropic-version": "2023-06-01",
        "x-compact-proxy-token": TOKEN,
    }
    caplog.set_level(logging.DEBUG)
    async with LifespanManager(app):
        proxied = httpx.ASGITransport(app=parts.proxy)
        async with httpx.AsyncClient(transport=proxied, base_url="http://proxy") as http:
            answers = [
                await http.post("/v1/messages", content=_body(last), headers=headers)
                for last in (2, 14, 16)
            ]
        api = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=api, base_url="http://api") as http:
            exposition = (await http.get("/metrics")).text
            session = answers[-1].headers["x-compact-session"]
            records = (await http.get(f"/sessions/{session}/compactions")).text
    actions = [a.headers["x-compact-action"] for a in answers]
    assert "compacted" in actions or "applied" in actions
    assert all(dict(s.headers).get(b"x-api-key") == CANARY.encode() for s in upstream.sent)
    assert upstream.sent[0].body == _body(2)
    written = [p for p in (tmp_path / "data").rglob("*") if p.is_file()]
    assert any("archives" in str(p) for p in written)
    places: dict[str, Any] = {str(p): p.read_bytes() for p in written}
    places.update(logs=caplog.text.encode(), metrics=exposition.encode(), records=records.encode())
    places.update(headers=repr([dict(a.headers) for a in answers]).encode())
    for secret in (CANARY, TOKEN, "CANARY"):
        assert [where for where, data in places.items() if secret.encode() in data] == []


@pytest.mark.slow
def test_a_key_in_the_query_or_a_header_reaches_the_provider_and_no_log_line(
    tmp_path: Path,
) -> None:
    """Through the real upstream client, logging at debug: the provider gets the query and
    the key as sent; the log has neither (the HTTP clients' own lines are quiet)."""
    import io

    from app.adapters.logs import configure_logging
    from tests.fakes.provider import FakeProvider
    from tests.proxy.live import serve_proxy

    stream = io.StringIO()
    configure_logging("json", "debug", stream)
    try:
        with FakeProvider() as provider, serve_proxy(provider.url, tmp_path) as live:
            body = orjson.dumps(
                {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
            )
            answer = httpx.post(
                f"{live.proxy}/v1/chat/completions?key={CANARY}",
                content=body,
                headers={"authorization": f"Bearer {CANARY}", "content-type": "application/json"},
            )
            received = provider.last.received
    finally:
        configure_logging("json", "warning", io.StringIO())
    assert answer.status_code == 200
    assert received.query == f"key={CANARY}"
    assert ("authorization", f"Bearer {CANARY}") in [(k.lower(), v) for k, v in received.headers]
    assert stream.getvalue()
    assert CANARY not in stream.getvalue()
