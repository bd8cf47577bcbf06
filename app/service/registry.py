"""Every strategy, by name, and what follows it when it cannot reach the goal: the one
place a new strategy is registered."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from app.core.vocabulary import STRATEGY_NAMES, StrategyName
from app.service.strategies.full import Full
from app.service.strategies.prune import Prune
from app.service.strategies.selective import Selective
from app.service.strategies.tail import Tail
from app.service.strategy import Strategy

STRATEGIES: Mapping[StrategyName, Strategy[Any]] = MappingProxyType(
    {s.name: s for s in (Full(), Tail(), Selective(), Prune())}
)
# Tried in order after the strategy asked for declines or leaves the context not smaller
# and under the threshold (`options.fallback`, default on). `full` summarizes everything
# after the system prompt: nothing smaller is left to try after it.
FALLBACKS: Mapping[StrategyName, tuple[StrategyName, ...]] = MappingProxyType(
    {"full": (), "tail": ("full",), "selective": ("full",), "prune": ("tail", "full")}
)
if tuple(sorted(STRATEGIES)) != tuple(sorted(FALLBACKS)):  # pragma: no cover
    raise RuntimeError("every strategy needs its fallbacks declared")
if tuple(sorted(STRATEGIES)) != tuple(sorted(STRATEGY_NAMES)):  # pragma: no cover
    raise RuntimeError("every strategy name needs exactly one registered strategy")
