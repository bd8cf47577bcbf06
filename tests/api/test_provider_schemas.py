"""Every output of every strategy, in both formats, is a request the provider accepts:
validated against the official SDKs' request parameter types (`anthropic.types.MessageParam`,
`openai.types.chat.ChatCompletionMessageParam`) with unknown keys forbidden.

The SDKs' TypedDicts allow extra keys by default and pydantic applies a TypeAdapter's
config only to the outer type, so `strict_adapter` gives every TypedDict reachable from the
root `extra="forbid"` (restored afterwards), and `consume` walks the result: the SDKs type
lists as `Iterable[...]`, which pydantic validates lazily, item by item, as it is read.
Anthropic takes the leading system messages as its `system` parameter (text only).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, get_args

import httpx
import pytest
from anthropic.types import MessageParam, TextBlockParam
from openai.types.chat import ChatCompletionMessageParam
from pydantic import ConfigDict, TypeAdapter, ValidationError
from typing_extensions import get_type_hints, is_typeddict

from tests.builders import assistant, rounds, system, tool_result, tool_use, user

pytestmark = pytest.mark.anyio

BIG = "line of tool output\n" * 80


def typeddicts(tp: Any, seen: set[type]) -> set[type]:
    if isinstance(tp, type) and is_typeddict(tp):
        if tp not in seen:
            seen.add(tp)
            for hint in get_type_hints(tp, include_extras=True).values():
                typeddicts(hint, seen)
    else:
        for arg in get_args(tp):
            typeddicts(arg, seen)
    return seen


def consume(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: consume(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, Iterator)):
        return [consume(item) for item in value]
    return value


@pytest.fixture(scope="module")
def strict() -> Iterator[dict[str, TypeAdapter[Any]]]:
    roots: dict[str, Any] = {
        "anthropic": list[MessageParam],
        "anthropic_system": str | list[TextBlockParam],
        "openai": list[ChatCompletionMessageParam],
    }
    classes: set[type] = set()
    for root in roots.values():
        typeddicts(root, classes)
    saved = {cls: cls.__dict__.get("__pydantic_config__") for cls in classes}
    for cls in classes:
        cls.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)  # type: ignore[attr-defined]
    try:
        yield {name: TypeAdapter(root) for name, root in roots.items()}
    finally:
        for cls, config in saved.items():
            if config is None:
                del cls.__pydantic_config__  # type: ignore[attr-defined]
            else:
                cls.__pydantic_config__ = config  # type: ignore[attr-defined]


def assert_valid(strict: dict[str, TypeAdapter[Any]], fmt: str, messages: list[Any]) -> None:
    if fmt == "openai":
        consume(strict["openai"].validate_python(messages))
        return
    head = 0
    while head < len(messages) and messages[head]["role"] == "system":
        consume(strict["anthropic_system"].validate_python(messages[head]["content"]))
        head += 1
    consume(strict["anthropic"].validate_python(messages[head:]))


def anthropic_conversation() -> list[dict[str, Any]]:
    read = tool_use("read_file", "r1", path="src/app.py")
    failing = tool_use("bash", "b1", command="pytest -q")
    error = tool_result("b1", BIG, is_error=True)
    listed = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "b2", "content": [{"type": "text", "text": BIG}]}
        ],
    }
    return [
        system("You are a coding agent."),
        user("Fix the failing test in src/app.py."),
        assistant("I will read the file first.", read),
        tool_result("r1", BIG),
        assistant(failing),
        error,
        assistant(tool_use("bash", "b2", command="ls -la")),
        listed,
        assistant("The test fails on an import; fixed it."),
        *rounds(1, 3, BIG),
        user("Now run the linters."),
    ]


def openai_conversation() -> list[dict[str, Any]]:
    def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
        function = {"name": name, "arguments": arguments}
        return {"id": call_id, "type": "function", "function": function}

    out: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "developer", "content": "Prefer small diffs."},
        {"role": "user", "content": "Fix the failing test in src/app.py."},
        {
            "role": "assistant",
            "content": "I will read the file and run the tests.",
            "tool_calls": [
                call("c1", "read_file", '{"path": "src/app.py"}'),
                call("c2", "bash", '{"command": "pytest -q"}'),
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": BIG},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": BIG}]},
        {"role": "assistant", "content": "Fixed the import."},
    ]
    for i in range(3, 7):
        out += [
            {"role": "user", "content": [{"type": "text", "text": f"Task {i}."}]},
            {"role": "assistant", "content": None, "tool_calls": [call(f"c{i}", "bash", "{}")]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": BIG},
            {"role": "assistant", "content": f"Done {i}."},
        ]
    out.append({"role": "user", "content": "Now run the linters."})
    return out


VARIANTS = {
    "full": {"strategy": "full"},
    "tail": {"strategy": "tail", "tail_keep_recent_rounds": 1},
    "selective": {
        "strategy": "selective",
        "selective_keep_recent": 1,
        "selective_tool_call_threshold": 5,
        "selective_tool_result_threshold": 20,
        "selective_preview_tokens": 5,
    },
    "selective+summary": {
        "strategy": "selective",
        "selective_keep_recent": 1,
        # the rules leave ~450 tokens, over this 400-token threshold: the summary runs, and
        # its result (~250) is under it, so it is kept rather than refused with `no_gain`
        "context_window": 800,
        "threshold": 0.5,
    },
    "prune": {"strategy": "prune", "prune_keep_recent": 1},
    "prune+inputs": {"strategy": "prune", "prune_keep_recent": 0, "prune_clear_inputs": True},
}
CONVERSATIONS = {"anthropic": anthropic_conversation, "openai": openai_conversation}


def test_the_conversations_themselves_are_valid(strict: dict[str, TypeAdapter[Any]]) -> None:
    for fmt, build in CONVERSATIONS.items():
        assert_valid(strict, fmt, build())


@pytest.mark.parametrize("fmt", CONVERSATIONS)
def test_an_unknown_key_is_refused_by_the_strict_check(
    strict: dict[str, TypeAdapter[Any]], fmt: str
) -> None:
    """What this file guards against: `prune` used to add `compacted_at` here."""
    messages = CONVERSATIONS[fmt]()
    index = 3 if fmt == "anthropic" else 4
    if fmt == "anthropic":
        messages[index]["content"][0]["compacted_at"] = "2026-11-25T00:00:00+00:00"
    else:
        messages[index]["compacted_at"] = "2026-11-25T00:00:00+00:00"
    with pytest.raises(ValidationError, match="compacted_at"):
        assert_valid(strict, fmt, messages)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("fmt", CONVERSATIONS)
async def test_every_strategy_returns_what_the_provider_accepts(
    client: httpx.AsyncClient, strict: dict[str, TypeAdapter[Any]], fmt: str, variant: str
) -> None:
    body = {"messages": CONVERSATIONS[fmt](), "force": True, "options": VARIANTS[variant]}
    response = await client.post("/compact", json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["compacted"] is True, data
    assert data["format"] == fmt
    # selective's rules alone write no summary, only the ledger of what they removed
    summary = data["summary"]
    if variant in {"full", "tail", "selective+summary"}:
        assert summary is not None
        assert not summary.startswith("## Ledger")
    elif variant == "selective":
        assert summary is not None
        assert summary.startswith("## Ledger\n")
    else:
        assert summary is None
    assert data["messages"] != body["messages"]
    assert_valid(strict, fmt, data["messages"])
    # and what comes back when nothing is compacted is what was sent
    options = {"strategy": VARIANTS[variant]["strategy"]}
    unchanged = (
        await client.post("/compact", json=body | {"force": False, "options": options})
    ).json()
    assert unchanged["compacted"] is False
    assert_valid(strict, fmt, unchanged["messages"])
