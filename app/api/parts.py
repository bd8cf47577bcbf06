"""What `create_app` built for the routes, kept in the app's state as one typed object.

Route dependencies (`app.api.deps`) and the request parser (`app.api.routing`) read its
fields, so a name misspelt or a part not built is an error where the app is wired, not an
attribute looked up by name on the first request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.applications import Starlette

from app.api.limits import ShapeLimits
from app.api.sent_counts import SentCounts
from app.core.ports import DataDirectory, SummarizerProbe
from app.service.compaction import CompactionService
from app.service.jobs import JobManager
from app.service.metrics import Metrics
from app.service.recall import Recaller
from app.service.toolkit import ToolkitService

_KEY = "parts"


class ProxyEdge(Protocol):
    """The transparent proxy's ASGI app (`app.proxy`), served on its own port by the same
    process; the lifespan closes it."""

    async def __call__(
        self,
        scope: Mapping[str, Any],
        receive: Callable[[], Awaitable[dict[str, Any]]],
        send: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> None: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class AppParts:
    service: CompactionService
    jobs: JobManager
    toolkit: ToolkitService
    metrics: Metrics
    data_dir: DataDirectory
    shape_limits: ShapeLimits
    sent_counts: SentCounts | None
    recaller: Recaller
    # `/readyz`: the LLM server's reachability, and whether readiness waits for it.
    summarizer_probe: SummarizerProbe | None = None
    summarizer_required: bool = False
    proxy: ProxyEdge | None = None

    def install(self, app: Starlette) -> None:
        app.state[_KEY] = self


def parts_of(app: Starlette) -> AppParts | None:
    """The parts installed in `app`; None in an app `create_app` did not build (a test's
    bare FastAPI app)."""
    try:
        parts = app.state[_KEY]
    except KeyError:
        return None
    return parts if isinstance(parts, AppParts) else None
