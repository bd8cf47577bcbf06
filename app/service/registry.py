"""Every strategy, by name: the one place a new strategy is registered."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from app.core.vocabulary import STRATEGY_NAMES, StrategyName
from app.service.strategies.full import Full
from app.service.strategies.prune import Prune
from app.service.strategies.selective import Selective
from app.service.strategies.tail import Tail
from app.service.strategy import Strategy

STRATEGIES: Mapping[StrategyName, Strategy] = MappingProxyType(
    {s.name: s for s in (Full(), Tail(), Selective(), Prune())}
)
if tuple(sorted(STRATEGIES)) != tuple(sorted(STRATEGY_NAMES)):  # pragma: no cover
    raise RuntimeError("every strategy name needs exactly one registered strategy")
