"""The message lists the API's examples show (`/docs`, the schema's `examples`): one in each
format, one long enough that compacting it pays, and an Anthropic SDK's request body."""

from __future__ import annotations

from pydantic import JsonValue

EXAMPLE_MESSAGES: list[JsonValue] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the failing test in tests/test_app.py."},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me read the test first."},
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "read_file",
                "input": {"path": "tests/test_app.py"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01", "content": "def test_app(): ..."}
        ],
    },
]

# A test run long enough that compacting the session pays: `/compact`'s examples compact
# (with the four messages above alone, the summary would be longer than what it replaces).
_TEST_RUN = "\n".join(
    [
        "============================= test session starts ==============================",
        *(f"tests/test_app.py::test_case_{i:02d} PASSED" for i in range(1, 41)),
        "tests/test_app.py::test_app FAILED",
        "E       assert app() == 1",
        "E        +  where 0 = app()",
        "========================= 1 failed, 40 passed in 0.52s =========================",
    ]
)
EXAMPLE_LONG_MESSAGES: list[JsonValue] = [
    *EXAMPLE_MESSAGES,
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "The test expects 1; app() returns 0. Running the suite."},
            {"type": "tool_use", "id": "toolu_02", "name": "bash", "input": {"command": "pytest"}},
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_02", "content": _TEST_RUN}],
    },
    {"role": "assistant", "content": "One failure left: app() must return 1. Fixing src/app.py."},
]

EXAMPLE_OPENAI_MESSAGES: list[JsonValue] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the failing test in tests/test_app.py."},
    {
        "role": "assistant",
        "content": "Let me read the test first.",
        "tool_calls": [
            {
                "id": "call_01",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "tests/test_app.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_01", "content": "def test_app(): ..."},
]

# An Anthropic SDK's `messages.create` body, sent whole (docs/api.md).
EXAMPLE_ANTHROPIC_REQUEST: dict[str, JsonValue] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 4096,
    "system": "You are a coding agent.",
    "tools": [
        {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ],
    "messages": EXAMPLE_MESSAGES[1:],
}
