"""What a strategy is: a name, its parameters record, and a run over the prepared request
with the shared steps. `app.service.registry` lists them; the service calls any of them
the same way, so a fallback chain is a list of names."""

from __future__ import annotations

from typing import Protocol, TypeVar

from app.core.result import CompactResult
from app.core.vocabulary import StrategyName
from app.service.prepared import Prepared
from app.service.steps import Steps

P = TypeVar("P")


class Strategy(Protocol[P]):
    @property
    def name(self) -> StrategyName: ...

    @property
    def description(self) -> str:
        """What it does, in a sentence: the API's `strategy` field and docs/strategies.md's
        table say it after its name."""
        ...

    @property
    def params(self) -> type[P]:
        """Its parameters record: a frozen dataclass of the `CompactOptions` it reads (by
        field name, or nested records of them), filled by `app.core.options.params.resolve_params`
        and handed to `run`."""
        ...

    @property
    def fallbacks(self) -> tuple[StrategyName, ...]:
        """Tried in order after it declines or leaves the context not smaller and under
        the threshold (`options.fallback`, default on)."""
        ...

    @property
    def summarizes(self) -> bool:
        """Whether it may call a summarizer: it then holds a summary slot while it runs,
        and a failed summary's cooldown replaces it with `prune`."""
        ...

    async def run(self, prepared: Prepared, params: P, steps: Steps) -> CompactResult:
        """The compaction: a result that compacted (archive written, built by
        `Steps.result` from the `Output` the steps' answers make up), or the input
        unchanged with a reason; either with the warnings its steps returned. Raises
        `InvalidConversationError` for a break in what it would return as sent, and lets
        `Steps.archive`'s `ArchiveError` through (the service answers `archive_failed`
        and removes the archive of any run whose result is not kept)."""
        ...
