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

LocalTokenizer = Literal["tiktoken", "o200k"]
"""An encoding counted offline: `tiktoken` is cl100k_base (its name since the first
release), `o200k` is o200k_base."""

TokenizerName = Literal["tiktoken", "o200k", "anthropic"]
"""Who counts: a local encoding, or the provider's count API."""

LimitName = Literal["context_window", "input_limit", "output_budget"]
"""Which limit a decision applied: the context window, the model's input limit (below its
window), or the window less the output the request reserves."""

STRATEGY_NAMES: tuple[StrategyName, ...] = get_args(StrategyName)
