"""What a strategy is: a name, the options it reads, and a run over the prepared request
with the shared steps. `app.service.registry` lists them; the service calls any of them
the same way, so a fallback chain is a list of names."""

from __future__ import annotations

from typing import Protocol

from app.core.compaction import CompactResult
from app.core.vocabulary import StrategyName
from app.service.prepared import Prepared
from app.service.steps import Steps


class Strategy(Protocol):
    @property
    def name(self) -> StrategyName: ...

    @property
    def options(self) -> frozenset[str]:
        """The `CompactOptions` fields it reads (besides the shared thresholds)."""
        ...

    @property
    def summarizes(self) -> bool:
        """Whether it may call a summarizer: it then holds a summary slot while it runs,
        and a failed summary's cooldown replaces it with `prune`."""
        ...

    async def run(self, prepared: Prepared, steps: Steps, warnings: list[str]) -> CompactResult:
        """The compaction: a result that compacted (archive written, built by
        `Steps.result`), or the input unchanged with a reason. Raises
        `InvalidConversationError` for a break in what it would return as sent, and lets
        `Steps.archive`'s `ArchiveError` through (the service answers `archive_failed`
        and removes the archive of any run whose result is not kept)."""
        ...
