"""Option names over HTTP: the strategy-prefixed names, and the former ones still accepted.

A request sent with a former name (`keep_recent`, `keep_recent_rounds`, ...) compacts as
the same request sent with the new name; the answer's first warnings say which names are
deprecated and what they are now. A former name beside its new name with another value is
a 422 naming the field sent; with the same value it is accepted. The OpenAPI document
lists the former names as deprecated, each naming its replacement.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from app.core.options.compact import FORMER_NAMES
from tests.api.test_jobs import wait_for
from tests.builders import assistant, system, tool_result, tool_use, user

pytestmark = pytest.mark.anyio


def block(n: int) -> list[dict[str, Any]]:
    call = tool_use("bash", f"t{n}", command=f"step {n} " + "with a long argument " * 40)
    return [assistant(f"Step {n}.", call), tool_result(f"t{n}", f"output {n} " * 200)]


MESSAGES = [
    system("s"),
    user("Fix it."),
    *block(1),
    *block(2),
    assistant("Half done."),
    user("Now the rest."),
    *block(3),
    *block(4),
    assistant("Done."),
]

# The same request under the new names, each option given a value unlike its default.
NEW = {
    "selective": {
        "strategy": "selective",
        "selective_keep_recent": 1,
        "selective_tool_call_threshold": 50,
        "selective_tool_result_threshold": 60,
        "selective_preview_tokens": 5,
        "selective_fallback_to_summary": False,
    },
    "tail": {"strategy": "tail", "tail_keep_recent_rounds": 1},
}
TIME = re.compile(r"\d{4}-\d\d-\d\dT[\d:.+]+")
FORMER = {new: former for former, new in FORMER_NAMES.items()}


def renamed(options: dict[str, Any]) -> dict[str, Any]:
    return {FORMER.get(name, name): value for name, value in options.items()}


def same_compaction(data: dict[str, Any]) -> dict[str, Any]:
    """The answer without what differs between two runs (the archive's id and time, the
    summarizer's time) or by the names sent (the warnings)."""
    archive_id = data["archive"]["id"]
    cost = {**data["summarizer_cost"], "seconds": "<seconds>"}
    return {
        key: TIME.sub("<time>", str(value).replace(archive_id, "<archive>"))
        for key, value in {**data, "summarizer_cost": cost}.items()
        if key not in {"archive", "warnings"}
    }


@pytest.mark.parametrize("strategy", sorted(NEW))
async def test_former_names_compact_as_the_new_names_and_the_answer_says_so(
    client: httpx.AsyncClient, strategy: str
) -> None:
    new, old = NEW[strategy], renamed(NEW[strategy])
    assert set(old) - {"strategy"} <= set(FORMER_NAMES)
    answers = []
    for options in (new, old):
        body = {"messages": MESSAGES, "force": True, "options": options}
        response = await client.post("/compact", json=body)
        assert response.status_code == 200, response.text
        answers.append(response.json())
    by_new, by_old = answers
    assert by_new["compacted"] is True
    assert same_compaction(by_old) == same_compaction(by_new)
    notes = [
        f"option `{FORMER[name]}` is deprecated: it is now `{name}`"
        for name in new
        if name in FORMER
    ]
    assert by_old["warnings"] == [*notes, *by_new["warnings"]]
    assert not any("deprecated" in warning for warning in by_new["warnings"])


@pytest.mark.parametrize(("former", "option"), sorted(FORMER_NAMES.items()))
async def test_a_former_name_beside_its_option_with_another_value_is_a_422_naming_it(
    client: httpx.AsyncClient, former: str, option: str
) -> None:
    first, second = (True, False) if "fallback" in option else (2, 3)
    options = {"strategy": "selective", option: first, former: second}
    body = {"messages": MESSAGES, "force": True, "options": options}
    response = await client.post("/compact", json=body)
    assert response.status_code == 422
    data = response.json()
    assert data["error"] == "invalid_request"
    (detail,) = data["details"]
    assert detail["field"] == f"options.{former}"
    assert f"`{option}`" in detail["message"]


@pytest.mark.parametrize(("former", "option"), sorted(FORMER_NAMES.items()))
async def test_a_former_name_beside_its_option_with_the_same_value_is_accepted(
    client: httpx.AsyncClient, former: str, option: str
) -> None:
    value = False if "fallback" in option else 2
    options = {"strategy": "prune", option: value, former: value}
    body = {"messages": MESSAGES, "force": True, "options": options}
    response = await client.post("/compact", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["warnings"][0] == (
        f"option `{former}` is deprecated: it is now `{option}`"
    )


async def test_a_former_name_keeps_its_options_bounds(client: httpx.AsyncClient) -> None:
    options = {"strategy": "tail", "keep_recent_rounds": 0}
    response = await client.post("/compact", json={"messages": MESSAGES, "options": options})
    assert response.status_code == 422
    assert [d["field"] for d in response.json()["details"]] == ["options.keep_recent_rounds"]


async def test_a_background_job_with_a_former_name_runs_as_the_new_name(
    client: httpx.AsyncClient,
) -> None:
    options = {"strategy": "tail", "keep_recent_rounds": 1}
    body = {"messages": MESSAGES, "force": True, "options": options}
    started = await client.post("/compactions", json=body)
    assert started.status_code == 202, started.text
    job = await wait_for(client, started.json()["id"], "done")
    assert job["result"]["strategy"] == "tail"
    assert job["result"]["warnings"][0] == (
        "option `keep_recent_rounds` is deprecated: it is now `tail_keep_recent_rounds`"
    )


async def test_the_schema_lists_the_former_names_as_deprecated(
    client: httpx.AsyncClient,
) -> None:
    schema = (await client.get("/openapi.json")).json()
    properties = schema["components"]["schemas"]["CompactOptions"]["properties"]
    for former, option in FORMER_NAMES.items():
        assert properties[former]["deprecated"] is True
        assert f"`{option}`" in properties[former]["description"]
        assert "deprecated" not in properties[option]
        assert properties[former]["anyOf"] == properties[option]["anyOf"]
