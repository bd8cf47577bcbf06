"""A compaction's options: the request model, each option declared once with its setting
(`compact`; the `setting` marker, which the toolkit's limits use too: `declaration`), and
the typed records strategies read them through, filled by one resolver (`params`)."""

from app.core.options.compact import CompactOptions, former_name_warnings
from app.core.options.declaration import defaults_of, setting, setting_type, settings_of
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
    "defaults_of",
    "former_name_warnings",
    "resolve_params",
    "setting",
    "setting_type",
    "settings_of",
]
