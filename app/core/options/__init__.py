"""A compaction's options: the request model, each option declared once with its setting
(`compact`, `declaration`), and the typed records strategies read them through, filled by
one resolver (`params`)."""

from app.core.options.compact import CompactOptions, former_name_warnings
from app.core.options.declaration import setting_type, settings_of
from app.core.options.params import (
    DecideParams,
    P,
    RestoreParams,
    RunParams,
    SummaryParams,
    resolve_params,
)

__all__ = [
    "CompactOptions",
    "DecideParams",
    "P",
    "RestoreParams",
    "RunParams",
    "SummaryParams",
    "former_name_warnings",
    "resolve_params",
    "setting_type",
    "settings_of",
]
