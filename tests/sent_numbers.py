"""Bodies that carry number literals, and a reading of JSON that keeps every number as the
text it was written as, to compare numbers byte for byte (independent of the server's own
reader)."""

from __future__ import annotations

import json
from typing import Any

from app.core.provider.dialects import to_openai
from app.core.vocabulary import Format
from tests.builders import assistant, parse, system, tool_result, tool_use, user

# The numbers and others no double or 64-bit integer holds as written.
ODD_NUMBERS = [
    "123456789012345678901",
    "99999999999999999999999999",
    "-123456789012345678901234567890",
    "1e309",
    "-1e309",
    "1e-400",
    "-0",
    "-0.0",
    "-0.000",
    "1E+2",
    "1e2",
    "2.50",
    "0.1000000000000000055511151231257827",
    "3.141592653589793238462643383279",
    "18446744073709551616",
    "-9223372036854775809",
]
SLOT = "@{}@"


def tagged(text: str | bytes) -> Any:
    """The JSON with each number read as `("n", literal)`: equal only when written alike."""
    return json.loads(
        text,
        parse_int=lambda s: ("n", s),
        parse_float=lambda s: ("n", s),
        parse_constant=lambda s: ("n", s),
    )


def with_numbers(template: Any, numbers: list[str]) -> bytes:
    """`template` as JSON text with each string `@i@` replaced by the literal `numbers[i]`."""
    text = json.dumps(template)
    for i, literal in enumerate(numbers):
        text = text.replace(json.dumps(SLOT.format(i)), literal)
    return text.encode()


def slots(start: int, count: int) -> list[str]:
    return [SLOT.format(i) for i in range(start, start + count)]


def numbered_messages(fmt: Format, lines: int = 0) -> list[dict[str, Any]]:
    """A short session whose tool input, block and message extra fields hold slots 0-5;
    `lines` lines of tool output make it worth compacting."""
    call = tool_use("measure", "t1", n=SLOT.format(0), pair=slots(1, 2))
    output = "".join(f"line {i:04d} of the measurement log\n" for i in range(lines)) or "ok"
    raw = [
        system("You are a coding agent."),
        user("Measure it."),
        assistant("Measuring.", call),
        tool_result("t1", output),
        assistant("Measured."),
        user("Thanks, go on."),
    ]
    if fmt == "openai":
        items = to_openai(parse(raw))
        items[2]["x_meta"] = {"scale": SLOT.format(3), "bounds": slots(4, 2)}
        return items
    raw[2]["content"][1]["weight"] = SLOT.format(3)
    raw[2]["metadata"] = {"bounds": slots(4, 2)}
    return raw
