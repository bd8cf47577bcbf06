"""Property: whatever a strategy removes, the task stays in what it returns. Over generated
agent histories (a first request, tool exchanges with reads, commands and refused reads,
later requests of the user, the harness's own text), every strategy, forced at a small
window: the user's first request and every later request of the user's own are in the
output (verbatim, or as a ledger fact), and so is every flagged failure (as a ledger fact,
or in the stub `prune` leaves)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.adapters.tokenizer import TiktokenTokenizer
from app.core.messages import Message, dump_messages
from app.core.options.compact import CompactOptions
from app.service.compaction import CompactRequest
from app.service.registry import STRATEGIES
from tests.builders import (
    FakeSummarizer,
    assistant,
    build_service,
    parse,
    system,
    tool_result,
    tool_use,
    user,
)

TOKENIZER = TiktokenTokenizer()
FILLER = "\n".join(f"line {i}: value = compute(item_{i})" for i in range(120))
# What a refusal says after its first line: long enough for `prune` to clear it.
POLICY = "\n".join(f"rule {i}: paths under secrets/ are not readable" for i in range(40))
HARNESS = "<environment_details>\n# Open Tabs\nsrc/app.py\n</environment_details>"
SUMMARY = "\n".join(
    f"## {h}\n- the work so far" for h in ("Goals", "Progress", "Decisions", "Files", "Next")
)


def request(n: int) -> str:
    return f"Request {n}: make the parser accept token kind K{n} without breaking the cache."


def refused(n: int) -> str:
    return f"Error: cannot read src/secret_{n}.py: permission denied"


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The messages, the user's requests in order, and the failures flagged `is_error`."""
    out: list[dict[str, Any]] = [system("You are a coding agent."), user(request(0))]
    requests, failures = [request(0)], []
    calls = 0
    for _ in range(draw(st.integers(2, 14))):
        kind = draw(st.sampled_from(("read", "read", "command", "refused", "request", "harness")))
        if kind in ("request", "harness"):
            if out[-1]["role"] == "user":
                out.append(assistant("Working on it."))
            if kind == "request":
                requests.append(request(len(requests)))
                out.append(user(requests[-1]))
            else:
                out.append(user(HARNESS))
            continue
        calls += 1
        if out[-1]["role"] == "assistant":
            out.append(user("Go on."))
            requests.append("Go on.")
        if kind == "command":
            out.append(
                assistant("Running.", tool_use("bash", f"c{calls}", command=f"make t{calls}"))
            )
            out.append(tool_result(f"c{calls}", FILLER))
        elif kind == "read":
            call = tool_use("read_file", f"c{calls}", path=f"src/mod_{calls}.py")
            out += [assistant("Reading.", call), tool_result(f"c{calls}", FILLER)]
        else:
            call = tool_use("read_file", f"c{calls}", path=f"src/secret_{calls}.py")
            failures.append(refused(calls))
            out += [
                assistant("Reading.", call),
                tool_result(f"c{calls}", f"{failures[-1]}\n{POLICY}", is_error=True),
            ]
    return out, requests, failures


def flat(messages: list[Message]) -> str:
    text = str(dump_messages(messages))
    return " ".join(text.replace("\\n", " ").split())


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("strategy", tuple(STRATEGIES))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=histories(), window=st.sampled_from([2000, 4000, 8000]))
async def test_every_strategy_keeps_every_request_and_every_flagged_failure(
    strategy: str, history: tuple[list[dict[str, Any]], list[str], list[str]], window: int
) -> None:
    raw, requests, failures = history
    service = build_service(TOKENIZER, FakeSummarizer(lambda r: SUMMARY), ledger_budget=None)
    options = CompactOptions(strategy=strategy, context_window=window, fallback=False)
    result = await service.compact(CompactRequest(parse(raw), options, force=True))
    text = flat(result.messages)
    for said in requests:
        assert said in text, (strategy, result.strategy, said)
    for failure in failures:
        assert failure in text, (strategy, failure)
