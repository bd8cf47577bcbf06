"""Numbers come back as sent (docs/guarantees.md): in the messages of an unchanged answer
and in archives, big integers, `1e309`, `-0`, `1e-400` and every other spelling are the
agent's own literals; an over-long number is a 422 naming where it sits."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest

from app.core.errors import SummarizerError
from app.core.json_numbers import MAX_NUMBER_CHARS
from app.core.ports import SummaryRequest
from app.core.vocabulary import Format
from tests.builders import FakeSummarizer
from tests.sent_numbers import ODD_NUMBERS, numbered_messages, tagged, with_numbers

pytestmark = pytest.mark.anyio

FORMATS: list[Format] = ["anthropic", "openai"]
JSON = {"content-type": "application/json"}
SIX = [ODD_NUMBERS[i : i + 6] for i in range(0, len(ODD_NUMBERS), 6)]
SIX[-1] = (SIX[-1] + ODD_NUMBERS)[:6]


async def post(client: httpx.AsyncClient, route: str, body: bytes) -> httpx.Response:
    return await client.post(route, content=body, headers=JSON)


def sent_messages(body: bytes) -> Any:
    return tagged(body)["messages"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("numbers", SIX)
async def test_an_answer_below_the_threshold_gives_every_number_back_as_sent(
    client: httpx.AsyncClient, fmt: Format, numbers: list[str]
) -> None:
    body = with_numbers({"messages": numbered_messages(fmt)}, numbers)
    answer = await post(client, "/compact", body)
    assert answer.status_code == 200, answer.text
    assert (answer.json()["compacted"], answer.json()["reason"]) == (False, "below_threshold")
    assert tagged(answer.content)["messages"] == sent_messages(body)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_refused_compaction_gives_every_number_back_as_sent(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    body = with_numbers({"messages": numbered_messages(fmt), "force": True}, SIX[0])
    answer = await post(client, "/compact", body)
    assert answer.json()["reason"] == "no_gain"
    assert tagged(answer.content)["messages"] == sent_messages(body)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_tool_input_with_1e309_beside_a_big_integer_is_answered_not_a_500(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    numbers = ["1e309", "123456789012345678901", "1", "2", "3", "4"]
    body = with_numbers({"messages": numbered_messages(fmt)}, numbers)
    for route in ("/compact", "/count", "/should-compact"):
        answer = await post(client, route, body)
        assert answer.status_code == 200, (route, answer.text)
    answer = await post(client, "/compact", body)
    assert b"[123456789012345678901," in answer.content or fmt == "openai"
    assert tagged(answer.content)["messages"] == sent_messages(body)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_an_archive_holds_every_number_as_sent(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    body = with_numbers({"messages": numbered_messages(fmt, 300), "force": True}, SIX[1])
    await assert_archived_as_sent(client, body)


async def assert_archived_as_sent(client: httpx.AsyncClient, body: bytes) -> None:
    """Compacts `body`, then reads its archive: the archived messages are a run of the sent
    ones, every number written as it was sent. Shared with the PostgreSQL tests."""
    answer = await post(client, "/compact", body)
    assert answer.json()["compacted"] is True, answer.json()["warnings"]
    archive_id = answer.json()["archive"]["id"]
    stored = await client.get(f"/archives/{archive_id}")
    assert stored.status_code == 200
    archived = tagged(stored.content)["messages"]
    sent = sent_messages(body)
    start = sent.index(archived[0])
    assert archived == sent[start : start + len(archived)]
    numbers = {literal for _, literal in _numbers(sent)}
    assert numbers <= {literal for _, literal in _numbers(archived)}


def _numbers(value: Any) -> list[tuple[str, str]]:
    if isinstance(value, tuple):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    return []


@pytest.mark.parametrize("route", ["/compact", "/count", "/should-compact"])
@pytest.mark.parametrize(
    "literal",
    ["9" * 5000, "-" + "1" * MAX_NUMBER_CHARS, "0." + "1" * MAX_NUMBER_CHARS, "1e" + "0" * 999],
)
async def test_an_over_long_number_is_a_422_naming_where_it_sits(
    client: httpx.AsyncClient, route: str, literal: str
) -> None:
    numbers = ["1", "2", literal, "4", "5", "6"]
    body = with_numbers({"messages": numbered_messages("anthropic")}, numbers)
    answer = await post(client, route, body)
    assert answer.status_code == 422
    error = answer.json()
    assert error["error"] == "number_too_long"
    assert error["details"] == [
        {
            "field": "messages[2].content[1].input.pair[1]",
            "message": f"a number of {len(literal)} characters; at most 1000 are accepted",
        }
    ]


async def test_a_number_at_the_length_limit_comes_back_as_sent(
    client: httpx.AsyncClient,
) -> None:
    longest = "0." + "3" * (MAX_NUMBER_CHARS - 2)
    body = with_numbers({"messages": numbered_messages("anthropic")}, [longest, *SIX[0][1:]])
    answer = await post(client, "/compact", body)
    assert tagged(answer.content)["messages"] == sent_messages(body)


@pytest.mark.parametrize(
    ("spelled", "plain"),
    [("1E+2", "100.0"), ("-0", "0"), ("2.50", "2.5"), ("-0.000", "-0.0")],
)
async def test_token_counts_do_not_depend_on_how_a_number_is_spelled(
    client: httpx.AsyncClient, spelled: str, plain: str
) -> None:
    def count_body(literal: str) -> bytes:
        return with_numbers({"messages": numbered_messages("anthropic")}, [literal] * 6)

    counts = [(await post(client, "/count", count_body(n))).json() for n in (spelled, plain)]
    assert counts[0]["token_count"] == counts[1]["token_count"]


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_failed_summary_gives_every_number_back_as_sent(
    client_for: Any, fmt: Format
) -> None:
    def down(request: SummaryRequest) -> str:
        raise SummarizerError("the LLM is down", retryable=False)

    client = await client_for(FakeSummarizer(down), summary_fallback="none")
    body = with_numbers({"messages": numbered_messages(fmt, 300), "force": True}, SIX[2])
    answer = await post(client, "/compact", body)
    assert answer.json()["reason"] == "summarization_failed"
    assert tagged(answer.content)["messages"] == sent_messages(body)


@pytest.mark.parametrize("fmt", FORMATS)
async def test_assemble_gives_the_history_back_with_its_numbers_as_sent(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    history = numbered_messages(fmt)[1:]
    body = with_numbers({"system": "s", "messages": history, "input": "go"}, SIX[0])
    answer = await post(client, "/assemble", body)
    assert answer.status_code == 200, answer.text
    # After the system prompt; the input joins the last user message.
    assert tagged(answer.content)["messages"][1:4] == sent_messages(body)[:3]


@pytest.mark.parametrize("fmt", FORMATS)
async def test_a_background_job_left_unchanged_keeps_its_numbers_as_sent(
    client: httpx.AsyncClient, fmt: Format
) -> None:
    body = with_numbers({"messages": numbered_messages(fmt)}, SIX[0])
    started = await post(client, "/compactions", body)
    assert started.status_code == 202, started.text
    for _ in range(200):
        job = await client.get(f"/compactions/{started.json()['id']}")
        if job.json()["state"] not in ("queued", "running"):
            break
        await anyio.sleep(0.02)
    assert (job.json()["state"], job.json()["result"]["reason"]) == ("done", "below_threshold")
    assert tagged(job.content)["result"]["messages"] == sent_messages(body)
