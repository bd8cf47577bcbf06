"""Whether one summary call can finish within the configured time on a local CPU server.

A small model on a CPU reads a prompt at tens of tokens a second and writes at a few:
a 100k-token chunk under a 60 s timeout can never succeed, and each attempt keeps the
server busy long after the service gave up (a serial server queues the retry behind it).
The speeds are the slowest measured on a 2-core machine (bench/RESULTS.md, `bench.llm`);
a faster machine only makes the warning cautious.
"""

from __future__ import annotations

from dataclasses import dataclass

# Tokens a second: reading the prompt, writing the answer (Qwen2.5-Coder-0.5B Q4_K_M under
# llama.cpp on 2 shared cores: 70-100 and 7-24).
PROMPT_TOKENS_PER_SECOND = 70.0
ANSWER_TOKENS_PER_SECOND = 7.0


@dataclass(frozen=True)
class CallBound:
    """The largest call the settings allow, and the time they give it."""

    input_tokens: int
    output_tokens: int
    timeout: float
    attempts: int
    deadline: float


def call_seconds(input_tokens: int, output_tokens: int) -> float:
    """The time of one call at the slow local speeds."""
    return input_tokens / PROMPT_TOKENS_PER_SECOND + output_tokens / ANSWER_TOKENS_PER_SECOND


def deadline_warning(bound: CallBound) -> str | None:
    """A warning naming the settings to change when the largest call cannot finish within
    the timeout or the deadline at the slow local speeds; None when it can."""
    needed = call_seconds(bound.input_tokens, bound.output_tokens)
    allowed = min(bound.timeout, bound.deadline)
    if needed <= allowed:
        return None
    return (
        f"a summary call of up to {bound.input_tokens} input and {bound.output_tokens} output "
        f"tokens takes about {needed:.0f} s on a local CPU server "
        f"(~{PROMPT_TOKENS_PER_SECOND:g} prompt, ~{ANSWER_TOKENS_PER_SECOND:g} answer tokens/s), "
        f"more than COMPACT_SUMMARY_TIMEOUT={bound.timeout:g} / COMPACT_SUMMARY_DEADLINE="
        f"{bound.deadline:g}: raise them, or lower COMPACT_SUMMARY_INPUT_BUDGET and "
        "COMPACT_SUMMARY_MAX_TOKENS (docs/summaries.md, a local CPU profile)"
    )
