"""Counting a message list as the pipeline counts it: the local encodings (cl100k, o200k),
the provider's count API when asked for, and the model table's margins.

Apart from `CompactionService`, which extends it, so that counting alone (the command
line's `count`) builds a tokenizer and nothing of the pipeline: no strategies, stores or
summarizer. Tokenizing runs in worker threads, never on the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from anyio import to_thread

from app.core.decide import Basis
from app.core.errors import CountError
from app.core.messages import Message
from app.core.model_table import MODELS, ModelSpec
from app.core.ports import ProviderCounter, Tokenizer
from app.core.tokens import count_messages, tool_texts
from app.core.vocabulary import LocalTokenizer, TokenizerName
from app.service.answers import Count

log = logging.getLogger("context_compact.compaction")


class CountingService:
    """Counts messages and tool definitions; `as_judged` raises a count as the threshold
    sees it."""

    def __init__(
        self,
        *,
        tokenizer: Tokenizer,
        provider_counter: ProviderCounter | None = None,
        o200k: Tokenizer | None = None,
        models: Mapping[str, ModelSpec] = MODELS,
    ) -> None:
        self.tokenizer = tokenizer
        self.o200k = o200k
        self.models = models
        self.provider_counter = provider_counter

    async def count(self, messages: Sequence[Message]) -> int:
        return sum(await self.count_each(messages))

    async def count_each(self, messages: Sequence[Message]) -> list[int]:
        return await to_thread.run_sync(count_messages, self.tokenizer, messages)

    async def count_with(self, messages: Sequence[Message], tokenizer: TokenizerName) -> Count:
        """The provider's count when asked for and available; else the local one, marked
        inexact with a warning when the provider's was asked for."""
        if tokenizer == "o200k":
            counts, counted = await self.count_each_by(messages, tokenizer)
            return replace(counted, token_count=sum(counts))
        if tokenizer == "anthropic":
            if self.provider_counter is None:
                warning = "no Anthropic API key: counted locally"
            else:
                try:
                    total = await self.provider_counter.count_tokens(messages)
                except CountError as exc:
                    log.warning("provider count failed", extra={"error": str(exc)})
                    warning = f"{exc}: counted locally"
                else:
                    return Count(total, self.provider_counter.name)
            local = await self.count(messages)
            return Count(local, self.tokenizer.name, exact=False, warnings=(warning,))
        return Count(await self.count(messages), self.tokenizer.name)

    async def count_each_by(
        self, messages: Sequence[Message], tokenizer: LocalTokenizer
    ) -> tuple[list[int], Count]:
        """Each message's count by a local encoding, and who counted (o200k falls back to
        cl100k, inexact, in a service built without it)."""
        if tokenizer == "o200k" and self.o200k is not None:
            counts = await to_thread.run_sync(count_messages, self.o200k, messages)
            return counts, Count(0, self.o200k.name)
        counts = await self.count_each(messages)
        if tokenizer == "o200k":
            return counts, Count(0, self.tokenizer.name, False, ("o200k not loaded: cl100k",))
        return counts, Count(0, self.tokenizer.name)

    async def count_tools(
        self, tools: Sequence[Mapping[str, Any]], tokenizer: TokenizerName
    ) -> int:
        """The local count of tool definitions (o200k's when asked for, else cl100k's)."""
        if not tools:
            return 0
        counter = self.o200k if tokenizer == "o200k" and self.o200k is not None else self.tokenizer
        counts = await to_thread.run_sync(counter.count_batch, tool_texts(tools))
        return sum(counts)

    def as_judged(self, counted: Count, basis: Basis) -> Count:
        """`counted` as the threshold sees it: raised by the model's margin and the tokens
        outside the messages; exact only when the count is the model's own."""
        provider = self.provider_counter
        local = provider is None or counted.tokenizer != provider.name
        # The provider's own count is exact, but not once tools counted here are added.
        own = basis.exact if local else basis.fixed_tokens == 0
        return replace(
            counted,
            token_count=basis.raised(counted.token_count, local),
            exact=counted.exact and own,
        )
