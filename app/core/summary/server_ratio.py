"""How many of the summarizer server's tokens one cl100k token makes, measured on a sample.

Budgets are counted in cl100k, the server's window in its own tokens. A server that counts
text for us (llama.cpp and vLLM `POST /tokenize`, llama-cpp-python
`POST /extras/tokenize/count`) is asked once for its count of `ratio_sample()`: a short
agent session, serialized as a summary's transcript is (a line-numbered file view, a
failing test run, tool calls, prose). The ratio, raised by `RATIO_MARGIN` for transcripts
that tokenize worse than the sample, then replaces the fixed `SERVER_TOKEN_RATIO`
(`app.core.summary.window_fit`). A ratio outside [`MIN_RATIO`, `MAX_RATIO`] is a misreading (a
count of characters or words), not a tokenizer: the fixed ratio stays.
"""

from __future__ import annotations

from functools import cache

from app.core.messages import Message
from app.core.summary.prompt import serialize_for_summary

# A measured ratio is raised by this much: the sample is one short transcript, and the
# ratio moves between transcripts of one model (Qwen2.5-Coder: 1.10 on the sample, up to
# 1.15 on the test corpus's transcripts, whose line-numbered file views it counts digit by
# digit; bench.server_ratio measures it).
RATIO_MARGIN = 1.08
MIN_RATIO = 0.5
MAX_RATIO = 4.0

_SOURCE = '''[File: /repo/shop/cart.py (214 lines total)]
(40 more lines above)
41:def apply_discount(total: float, code: str | None) -> float:
42:    """The total after the discount `code` grants; unknown codes grant nothing."""
43:    rates = {"SPRING10": 0.10, "VIP25": 0.25}
44:    if code is None:
45:        return total
46:    rate = rates.get(code, 0.0)
47:    return total * (1 - rate)
48:
49:
50:def cart_total(items: list[dict[str, float]]) -> float:
51:    return sum(item["price"] * item["quantity"] for item in items)
52:
53:
54:def shipping(total: float, country: str = "DE") -> float:
55:    if total >= 50.0:
56:        return 0.0
57:    return {"DE": 4.90, "AT": 6.90, "CH": 12.50}.get(country, 14.99)
(157 more lines below)
'''

_TRACEBACK = """============================= test session starts ==============================
collected 12 items

tests/test_cart.py ..........F.                                          [100%]

=================================== FAILURES ===================================
___________________________ test_discount_is_rounded ___________________________

    def test_discount_is_rounded():
>       assert apply_discount(19.99, "spring10") == 17.99
E       AssertionError: assert 19.99 == 17.99
E        +  where 19.99 = apply_discount(19.99, 'spring10')

tests/test_cart.py:41: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cart.py::test_discount_is_rounded - AssertionError: assert 19.99
========================= 1 failed, 11 passed in 0.21s =========================
"""

_SESSION = (
    {
        "role": "user",
        "content": "The discount in cart.py ignores lowercase codes: 19.99 with "
        "spring10 should cost 17.99. Fix it and keep the tests green; don't touch the API.",
    },
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll read the module and run the tests first."},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "cart.py"}},
        ],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": _SOURCE}]},
    {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "t2",
                "name": "bash",
                "input": {"command": "cd /repo && python -m pytest -q tests/test_cart.py"},
            }
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": _TRACEBACK, "is_error": True}
        ],
    },
    {
        "role": "assistant",
        "content": [
            {
                "type": "text",
                "text": "The codes are looked up as typed, so 'spring10' finds no rate. "
                "I'll upper-case the code before the lookup and round to cents.",
            },
            {
                "type": "tool_use",
                "id": "t3",
                "name": "str_replace",
                "input": {
                    "path": "cart.py",
                    "old": "rates.get(code, 0.0)",
                    "new": "rates.get(code.upper(), 0.0)",
                },
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t3",
                "content": "Edited cart.py: 1 line changed.",
            }
        ],
    },
)


@cache
def ratio_sample() -> str:
    """The text whose server count is measured: the session above as a summary reads it."""
    return serialize_for_summary([Message.model_validate(m) for m in _SESSION])


def measured_ratio(server_tokens: int, cl100k_tokens: int) -> float | None:
    """The server's tokens per cl100k token with the margin; None when the counts are not
    a tokenizer's (see the module's docstring)."""
    if server_tokens <= 0 or cl100k_tokens <= 0:
        return None
    ratio = server_tokens / cl100k_tokens
    if not MIN_RATIO <= ratio <= MAX_RATIO:
        return None
    return ratio * RATIO_MARGIN
