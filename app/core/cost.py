"""What a compaction's summaries cost: the summarizer's calls and the tokens they carried.

A compaction that costs more than it saves is turned off; so every compaction reports its
summarizer's calls, the tokens they read and wrote (by the service's tokenizer: the prompt
an LLM reads, the messages for the extractive summarizer, which builds none) and their
time, and how many answers were reused instead of asked again (`reused`: no call made).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SummarizerCost(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    calls: int = Field(0, description="Summarizer calls made (the fallback's included).")
    reused: int = Field(
        0, description="Summaries answered from earlier calls of the same input: no call made."
    )
    input_tokens: int = Field(0, description="Tokens the calls read (the service's tokenizer).")
    output_tokens: int = Field(0, description="Tokens the calls wrote.")
    seconds: float = Field(0.0, description="Time the calls took, one after another.")

    def plus(self, other: SummarizerCost) -> SummarizerCost:
        """Both costs together."""
        return SummarizerCost(
            calls=self.calls + other.calls,
            reused=self.reused + other.reused,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            seconds=round(self.seconds + other.seconds, 6),
        )


NO_COST = SummarizerCost()
