"""openapi.yaml, parsed once a test run (libyaml's loader when the machine has it): five
test modules read it at import, and the pure-Python parser made that a good part of the
suite's collection."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

OPENAPI_YAML = Path(__file__).resolve().parent.parent / "openapi.yaml"
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _parsed() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load(OPENAPI_YAML.read_text(encoding="utf-8"), _LOADER)
    return loaded


def load_spec() -> dict[str, Any]:
    """The document, a copy of its own for each caller (a test may change what it reads)."""
    return copy.deepcopy(_parsed())
