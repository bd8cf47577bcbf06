"""`prune`: no LLM call. Plan the clearing (`app.core.plans.prune`), archive the originals of
every changed message, return the list with old tool results replaced by placeholders."""

from __future__ import annotations

from dataclasses import dataclass

from anyio import to_thread

from app.core.plans import PruneRules, plan_prune
from app.core.result import CompactResult
from app.core.vocabulary import StrategyName
from app.service.prepared import Prepared, refuse_from
from app.service.steps import Output, Steps


@dataclass(frozen=True)
class PruneParams:
    prune_keep_recent: int
    prune_exclude_tools: tuple[str, ...]
    prune_clear_inputs: bool
    prune_min_tokens: int

    @property
    def rules(self) -> PruneRules:
        return PruneRules(
            keep_recent=self.prune_keep_recent,
            exclude_tools=frozenset(self.prune_exclude_tools),
            clear_inputs=self.prune_clear_inputs,
        )


@dataclass(frozen=True)
class Prune:
    name: StrategyName = "prune"
    description: str = "old tool results are cleared, no LLM call."
    params: type[PruneParams] = PruneParams
    fallbacks: tuple[StrategyName, ...] = ("tail", "full")
    summarizes: bool = False

    async def run(self, prepared: Prepared, params: PruneParams, steps: Steps) -> CompactResult:
        refuse_from(prepared, 0)  # every message comes back, cleared or as sent
        rules = params.rules
        minimum = params.prune_min_tokens
        at = steps.now().isoformat()
        messages = prepared.messages
        plan = await to_thread.run_sync(
            plan_prune, messages, rules, prepared.format, at, steps.tokenizer.count
        )
        if not plan.compacted_indexes or plan.tokens_saved < minimum:
            note = (
                f"clearing old tool results would save {plan.tokens_saved} tokens "
                f"(prune_min_tokens {minimum}, {rules.keep_recent} recent tool uses kept)"
            )
            return prepared.unchanged("nothing_to_prune", [note], self.name)
        originals = [messages[i] for i in plan.compacted_indexes]
        archive = await steps.archive(prepared, originals)
        built = Output(list(plan.messages), archive, plan.compacted_indexes)
        return await steps.result(prepared, self.name, built)


STRATEGY = Prune()
