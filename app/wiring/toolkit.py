"""Building the context-engineering toolkit (the server's toolkit routes) from the settings.
Apart from `app.wiring.service` so that the command line's `compact`, which never uses it, does
not import it and its tool-result rules.
"""

from __future__ import annotations

from app.adapters.seen_store import FileSeenStore
from app.adapters.workdir import SandboxedWorkdir
from app.core.ports import SeenStore
from app.service.freshness import Freshness
from app.service.toolkit import ToolkitDefaults, ToolkitService
from app.settings import Settings


def build_toolkit(settings: Settings, seen: SeenStore | None = None) -> ToolkitService:
    """The context-engineering toolkit: the same sandbox and data directory as the compaction."""
    workdir = SandboxedWorkdir(settings.workdir, aliases=settings.workdir_aliases)
    return ToolkitService(
        reader=workdir,
        inspector=workdir,
        freshness=Freshness(seen or FileSeenStore(settings.data_dir)),
        defaults=ToolkitDefaults(
            limits=settings.tool_results,
            mention_limit=settings.mention_limit,
            rules_max_bytes=settings.project_rules_max_bytes,
        ),
    )
