"""What every route of one fake provider shares: its limits, count, cache and script."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tests.fakes.provider.caching import PromptCache
from tests.fakes.provider.scripts import Answer, Script, Text, ToolCall
from tests.fakes.provider.windows import Counter, Limits

Flavor = Literal["openai", "llamacpp"]


@dataclass
class State:
    limits: Limits = field(default_factory=Limits)
    flavor: Flavor = "openai"  # how /v1/chat/completions refuses an over-long prompt
    validate: bool = True  # refuse requests the real API refuses (validation.py)
    responses_failed: bool = False  # a streamed Responses input too long: response.failed
    script: Script = field(default_factory=Script)
    counter: Counter = field(init=False)
    cache: PromptCache = field(init=False)

    def __post_init__(self) -> None:
        self.counter = Counter(self.limits)
        self.cache = PromptCache(self.counter, self.limits.min_cache_tokens)

    def output_tokens(self, answer: Answer, *, thinking: bool = True) -> int:
        texts: list[str] = []
        for block in answer.blocks:
            if isinstance(block, Text):
                texts.append(block.text)
            elif isinstance(block, ToolCall):
                texts.append(block.arguments())
            elif thinking:
                texts.append(block.thinking)
        return max(1, self.counter.scaled(sum(self.counter.raw(t) for t in texts if t)))
