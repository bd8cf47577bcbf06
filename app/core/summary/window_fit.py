"""A summary's input budget fitted to the server's context window.

A budget larger than the window is refused by the server (llama.cpp: HTTP 400 "exceeds the
available context size"), silently cut from its start (Ollama) or, with a window just above
the chunk, surfaces as a timeout. The budget is counted in cl100k while the server counts in
its own tokens: the window's room is divided by the ratio measured on the server when it
can count (`app.core.summary.server_ratio`), else by a conservative fixed one (Qwen2.5-Coder
1.03-1.15x, Gemma 1.22-1.25x cl100k on agent transcripts), and the answer's `max_tokens`
is kept free.
"""

from __future__ import annotations

# Server tokens per cl100k token, at most, measured on agent transcripts (Gemma: 1.22-1.25).
SERVER_TOKEN_RATIO = 1.25


def fitted_budget(
    budget: int, window: int | None, answer_tokens: int, ratio: float | None = None
) -> int:
    """`budget`, lowered to what the window holds beside the answer (never below 0), with
    the server's measured `ratio` when there is one."""
    if window is None:
        return budget
    room = int((window - answer_tokens) / (ratio or SERVER_TOKEN_RATIO))
    return max(min(budget, room), 0)


def fit_warning(budget: int, fitted: int, window: int) -> str:
    return (
        f"summary_input_budget {budget} lowered to {fitted}: the summarizer's server has a "
        f"context window of {window} tokens (set COMPACT_SUMMARY_INPUT_BUDGET to match it)"
    )
