"""The names the API, the service and the command line share, each spelled once.

A message format, a strategy and a tokenizer are each one `Literal` type: the request
models, the result, the records and the service all take these, so adding a strategy or a
format is one line here plus the code that serves it.
"""

from __future__ import annotations

from typing import Literal, get_args

Format = Literal["anthropic", "openai"]
"""The shape of a message list: Anthropic Messages (canonical) or OpenAI chat."""

RequestFormat = Literal["auto", Format]
"""A request's `format`: one of the formats, or `auto` (detected from the messages)."""

StrategyName = Literal["full", "tail", "selective", "prune"]
"""A compaction strategy (`app.service.registry` maps each to its implementation)."""

TokenizerName = Literal["tiktoken", "anthropic"]
"""Who counts: the local tokenizer, or the provider's count API."""

STRATEGY_NAMES: tuple[StrategyName, ...] = get_args(StrategyName)
