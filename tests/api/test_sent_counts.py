"""A re-count of a history that only grew reads only what is new: messages sent before are
counted from the memo of their JSON, with the same answer as a full count, and never where
the memo could be wrong (OpenAI shape, the provider's tokenizer, a body only `json` parses)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from app.adapters.tokenizer import TiktokenTokenizer
from app.api import dialect
from app.api.parts import parts_of
from app.api.sent_counts import SentCounts, sent_key
from app.core.decide import estimate_pending_input
from app.core.provider.dialects import to_openai
from app.core.tokens import REPLY_PRIMING, count_total
from app.main import create_app
from app.settings import Settings
from app.wiring.service import build_service
from tests.builders import assistant, parse, read_round, system, user

pytestmark = pytest.mark.anyio

HISTORY = [system("sys"), user("Fix a.py"), *read_round("a.py", "body"), assistant("ok")]
NEXT = user("Now run the tests.")
JSON = {"content-type": "application/json"}


def _sent(app: FastAPI) -> SentCounts | None:
    parts = parts_of(app)
    assert parts is not None
    return parts.sent_counts


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many messages each request had validated and parsed."""
    sizes: list[int] = []
    real = dialect.parse_messages

    def counting(raw: Sequence[dict[str, Any]], fmt: Any, forms: Any = None) -> Any:
        sizes.append(len(raw))
        return real(raw, fmt, forms)

    monkeypatch.setattr(dialect, "parse_messages", counting)
    return sizes


@pytest.fixture
async def app_for(
    settings_for: Callable[..., Settings], tokenizer: TiktokenTokenizer
) -> AsyncIterator[Callable[..., Any]]:
    """An app and an in-process client over it."""
    opened: list[tuple[LifespanManager, httpx.AsyncClient]] = []

    async def make(**overrides: Any) -> tuple[FastAPI, httpx.AsyncClient]:
        settings = settings_for(**overrides)
        app = create_app(settings, service=build_service(settings, tokenizer))
        manager = LifespanManager(app)
        await manager.__aenter__()
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=manager.app), base_url="http://compact.test"
        )
        opened.append((manager, client))
        return app, client

    yield make
    for manager, client in opened:
        await client.aclose()
        await manager.__aexit__(None, None, None)


async def test_a_recount_after_one_more_message_reads_only_that_message(
    app_for: Callable[..., Any], parsed: list[int], tokenizer: TiktokenTokenizer
) -> None:
    _, client = await app_for()
    first = await client.post("/count", json={"messages": HISTORY})
    again = await client.post("/count", json={"messages": [*HISTORY, NEXT]})
    assert parsed == [5, 1]
    assert first.json()["token_count"] == count_total(tokenizer, parse(HISTORY)) + REPLY_PRIMING
    total = count_total(tokenizer, parse([*HISTORY, NEXT])) + REPLY_PRIMING
    head = count_total(tokenizer, [m for m in parse(HISTORY) if m.role == "system"])
    assert again.json() == {
        "token_count": total,
        "message_count": 6,
        "tokenizer": "tiktoken",
        "exact": True,
        "format": "anthropic",
        "parts": {"system": head, "tools": 0, "messages": total - head},
        "warnings": [],
    }


async def test_the_same_history_again_reads_nothing_and_counts_the_same(
    app_for: Callable[..., Any], parsed: list[int]
) -> None:
    _, client = await app_for()
    first = await client.post("/count", json={"messages": HISTORY})
    again = await client.post("/count", json={"messages": HISTORY})
    assert parsed == [5, 0]
    assert again.json() == first.json()


async def test_an_invalid_new_message_is_named_at_its_place_in_the_request(
    app_for: Callable[..., Any],
) -> None:
    _, client = await app_for()
    await client.post("/count", json={"messages": HISTORY})
    broken = {"role": "user"}
    response = await client.post("/count", json={"messages": [*HISTORY, NEXT, broken]})
    assert response.status_code == 422
    assert response.json() == {
        "error": "invalid_request",
        "message": "messages[6].content: Field required",
        "details": [{"field": "messages[6].content", "message": "Field required"}],
    }


async def test_a_message_that_failed_validation_is_not_remembered(
    app_for: Callable[..., Any], parsed: list[int]
) -> None:
    app, client = await app_for()
    refused = await client.post("/count", json={"messages": [*HISTORY, {"role": "user"}]})
    assert refused.status_code == 422
    assert len(_sent(app)) == 0
    await client.post("/count", json={"messages": HISTORY})
    assert parsed == [6, 5]


@pytest.mark.parametrize(("number", "tokens"), [("NaN", 23), ("-Infinity", 25), ("-1e400", 25)])
async def test_a_body_only_json_parses_is_neither_remembered_nor_answered_from_memory(
    app_for: Callable[..., Any], tokenizer: TiktokenTokenizer, number: str, tokens: int
) -> None:
    """orjson writes NaN and infinities back as `null`: such a message must not take the
    count remembered for its `null` twin (`-Infinity` differs by two tokens here)."""
    app, client = await app_for()
    call = '{"type": "tool_use", "id": "t1", "name": "run", "input": {"x": [%s, %s, %s]}}'
    nulls = '{"messages": [{"role": "assistant", "content": [%s]}]}' % (call % (("null",) * 3))
    odd = '{"messages": [{"role": "assistant", "content": [%s]}]}' % (call % ((number,) * 3))
    remembered = await client.post("/count", content=nulls, headers=JSON)
    assert len(_sent(app)) == 1
    response = await client.post("/count", content=odd, headers=JSON)
    assert remembered.json()["token_count"] == 23
    assert response.json()["token_count"] == tokens
    assert len(_sent(app)) == 1


async def test_openai_messages_and_the_providers_tokenizer_are_not_remembered(
    app_for: Callable[..., Any],
) -> None:
    app, client = await app_for()
    openai = to_openai(parse(HISTORY))
    assert (await client.post("/count", json={"messages": openai})).status_code == 200
    as_anthropic = {"messages": HISTORY, "tokenizer": "anthropic"}
    assert (await client.post("/count", json=as_anthropic)).status_code == 200
    assert len(_sent(app)) == 0


async def test_no_memo_when_the_token_cache_is_disabled(
    app_for: Callable[..., Any], parsed: list[int]
) -> None:
    app, client = await app_for(token_cache_entries=0)
    assert _sent(app) is None
    await client.post("/count", json={"messages": HISTORY})
    await client.post("/count", json={"messages": HISTORY})
    assert parsed == [5, 5]


def test_the_least_recently_used_counts_go_first() -> None:
    sent = SentCounts(max_entries=2)
    a, b, c = (sent_key({"role": "user", "content": text}) for text in "abc")
    sent.remember([a, b], [1, 2])
    assert sent.known([a]) == [1]  # a is now the most recently used
    sent.remember([c], [3])
    assert sent.known([a, b, c]) == [1, None, 3]
    assert len(sent) == 2


def test_keys_are_the_json_as_sent() -> None:
    assert sent_key({"role": "user", "content": "a"}) == sent_key({"role": "user", "content": "a"})
    assert sent_key({"role": "user", "content": "a"}) != sent_key({"content": "a", "role": "user"})
    with pytest.raises(ValueError, match="max_entries must be positive"):
        SentCounts(0)


async def test_should_compact_reads_only_new_messages_and_decides_as_a_full_count(
    app_for: Callable[..., Any], parsed: list[int], tokenizer: TiktokenTokenizer
) -> None:
    _, client = await app_for()
    window = {"context_window": 1000, "threshold": 0.5, "pending_input": "and then?"}
    await client.post("/should-compact", json={"messages": HISTORY, **window})
    answer = await client.post("/should-compact", json={"messages": [*HISTORY, NEXT], **window})
    assert parsed == [5, 1]
    counted = count_total(tokenizer, parse([*HISTORY, NEXT])) + REPLY_PRIMING
    data = answer.json()
    assert data["token_count"] == counted + estimate_pending_input("and then?")
    assert (data["token_source"], data["message_count"], data["should_compact"]) == (
        "counted",
        6,
        False,
    )


async def test_should_compact_with_a_session_over_the_threshold_reads_all_for_the_hold(
    app_for: Callable[..., Any], parsed: list[int]
) -> None:
    _, client = await app_for()
    over = {"context_window": 100, "threshold": 0.1, "session_id": "s-1"}
    under = {"context_window": 100_000, "session_id": "s-1"}
    await client.post("/count", json={"messages": HISTORY})
    below = (await client.post("/should-compact", json={"messages": HISTORY, **under})).json()
    above = (await client.post("/should-compact", json={"messages": HISTORY, **over})).json()
    assert (below["should_compact"], above["should_compact"]) == (False, True)
    assert parsed == [5, 0, 0, 5]


async def test_should_compact_from_the_last_usage_still_validates_every_message(
    app_for: Callable[..., Any], parsed: list[int]
) -> None:
    _, client = await app_for()
    usage = {"input_tokens": 10, "output_tokens": 5}
    await client.post("/count", json={"messages": HISTORY})
    data = await client.post("/should-compact", json={"messages": HISTORY, "last_usage": usage})
    assert data.json()["token_source"] == "last_usage"
    assert parsed == [5, 5]


@pytest.mark.parametrize("seen", [False, True])
async def test_invalid_messages_are_reported_before_invalid_thresholds(
    app_for: Callable[..., Any], seen: bool
) -> None:
    _, client = await app_for()
    if seen:
        await client.post("/count", json={"messages": HISTORY})
    body = {
        "messages": [*HISTORY, {"role": "user"}],
        "threshold": 0.9,
        "overflow_threshold": 0.5,
    }
    response = await client.post("/should-compact", json=body)
    assert response.status_code == 422
    assert response.json()["message"] == "messages[5].content: Field required"
