"""The strategies' pure plans over a message list, one module each, mirroring
`app.service.strategies`: `tail`, `prune`, `selective`."""

from app.core.plans.archived import archived_end, archived_groups
from app.core.plans.prune import PruneRules, plan_prune
from app.core.plans.selective import SelectiveLimits, SelectivePlan, gap_filled, plan_selective
from app.core.plans.tail import (
    KEPT_SHARE,
    TailDeclined,
    archive_span,
    archived_header,
    archived_text,
    assemble_tail,
    plan_tail,
)

__all__ = [
    "KEPT_SHARE",
    "PruneRules",
    "SelectiveLimits",
    "SelectivePlan",
    "TailDeclined",
    "archive_span",
    "archived_end",
    "archived_groups",
    "archived_header",
    "archived_text",
    "assemble_tail",
    "gap_filled",
    "plan_prune",
    "plan_selective",
    "plan_tail",
]
