"""The answer's headers: the provider's own `date` and `server` only (uvicorn once added a
second `date` and `server: uvicorn`), the API's port as before; `x-compact-tokens-before`
our count of the body the agent sent (it once counted the stored head put in, so that
`before` and `after` were equal and savings read from headers showed zero)."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import pytest

from app.adapters.tokenizer import TiktokenTokenizer
from tests.builders import user
from tests.proxy.fakes import FakeUpstream, Reply
from tests.proxy.live import serve_proxy
from tests.proxy.test_app import _anthropic, _tokens, client, long_session, proxy
from tests.proxy.wire import RawUpstream, raw_request

HEADERS = {"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}
PROVIDER = [
    (b"content-type", b"application/json"),
    (b"date", b"Mon, 01 Jan 2024 00:00:00 GMT"),
    (b"server", b"provider/1"),
]


@pytest.mark.slow
def test_a_proxied_answer_carries_the_provider_s_date_and_server_only(tmp_path: Path) -> None:
    anthropic = [(k.encode(), v.encode()) for k, v in HEADERS.items()]
    with RawUpstream(headers=PROVIDER) as provider, serve_proxy(provider.url, tmp_path) as live:
        _, proxied, _ = raw_request(live.proxy, b"/v1/models", anthropic)
        _, ours, _ = raw_request(live.proxy, b"/admin", anthropic)
        api = httpx.get(live.api + "/healthz")
        too_large = raw_request(live.proxy, b"/v1/models", [(b"x-big", b"x" * 70_000)])
    named = [(k, v) for k, v in proxied if k in (b"date", b"server")]
    assert named == [(b"date", b"Mon, 01 Jan 2024 00:00:00 GMT"), (b"server", b"provider/1")]
    assert [k for k, _ in ours if k in (b"date", b"server")] == [b"date"]  # our own 404's
    assert (len(api.headers.get_list("date")), api.headers.get("server")) == (1, "uvicorn")
    assert too_large[0] == 431  # the server's own refusal: its date, no `server` either
    assert [k for k, _ in too_large[1] if k in (b"date", b"server")] == [b"date"]


@pytest.mark.anyio
async def test_tokens_before_counts_the_body_the_agent_sent_when_a_head_is_put_in(
    tokenizer: TiktokenTokenizer,
) -> None:
    no_usage = Reply(chunks=(b'{"id": "msg_1"}',))  # our count stays ours: no ratio
    upstream = FakeUpstream(lambda sent: no_usage)
    app = proxy(upstream, tokenizer)
    session = {**HEADERS, "x-claude-code-session-id": "s1"}
    messages = long_session(12)
    later = [*messages, {"role": "assistant", "content": "Next."}, user("And the docs.")]
    async with client(app) as http:
        first = await http.post("/v1/messages", content=_anthropic(messages), headers=session)
        second = await http.post("/v1/messages", content=_anthropic(later), headers=session)
    assert app.compactor is not None
    assert first.headers["x-compact-action"] == "compacted"
    assert second.headers["x-compact-action"] == "applied"
    sent = orjson.loads(upstream.sent[1].body)["messages"]
    assert int(second.headers["x-compact-tokens-before"]) == await _tokens(app.compactor, later)
    assert int(second.headers["x-compact-tokens-after"]) == await _tokens(app.compactor, sent)
    assert await _tokens(app.compactor, sent) < await _tokens(app.compactor, later)
