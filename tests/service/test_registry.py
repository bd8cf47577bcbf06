"""The registry finds each strategy in its own module, in `StrategyName`'s order."""

from __future__ import annotations

from app.core.vocabulary import STRATEGY_NAMES
from app.service.registry import FALLBACKS, STRATEGIES


def test_every_name_has_its_strategy_in_the_vocabularys_order() -> None:
    assert tuple(STRATEGIES) == STRATEGY_NAMES
    assert all(s.name == name for name, s in STRATEGIES.items())


def test_each_strategy_declares_what_follows_it() -> None:
    chains = {"full": (), "tail": ("full",), "selective": ("full",), "prune": ("tail", "full")}
    assert {name: FALLBACKS[name] for name in chains} == chains
