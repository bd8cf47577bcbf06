"""Every strategy, by name, found in its own module: the one place a strategy is listed is
its name in `StrategyName` (`app/core/vocabulary.py`).

Each module of `app/service/strategies/` declares `STRATEGY`, an instance whose `name` is
one of `StrategyName` and whose `fallbacks` say what follows it when it cannot reach the
goal. A name without a module, or a module without a name, stops the import here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from app.core.vocabulary import STRATEGY_NAMES, StrategyName
from app.service import strategies
from app.service.strategy import Strategy


def _found() -> dict[str, Strategy[Any]]:
    found: dict[str, Strategy[Any]] = {}
    for module in pkgutil.iter_modules(strategies.__path__):
        strategy = importlib.import_module(f"{strategies.__name__}.{module.name}").STRATEGY
        found[strategy.name] = strategy
    return found


_FOUND = _found()
if set(_FOUND) != set(STRATEGY_NAMES):  # pragma: no cover
    raise RuntimeError(
        f"strategy modules {sorted(_FOUND)} and StrategyName {sorted(STRATEGY_NAMES)} differ: "
        "each name needs exactly one module of app/service/strategies declaring STRATEGY"
    )
STRATEGIES: Mapping[StrategyName, Strategy[Any]] = MappingProxyType(
    {name: _FOUND[name] for name in STRATEGY_NAMES}
)
FALLBACKS: Mapping[StrategyName, tuple[StrategyName, ...]] = MappingProxyType(
    {name: s.fallbacks for name, s in STRATEGIES.items()}
)
if any(f not in STRATEGIES for chain in FALLBACKS.values() for f in chain):  # pragma: no cover
    raise RuntimeError("a strategy's fallbacks name a strategy that is not registered")
