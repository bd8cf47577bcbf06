"""Write openapi.yaml from the app's own schema (a test fails when the two drift).

Usage: python scripts/export_openapi.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from app.main import create_app
from app.settings import Settings

OPENAPI_PATH = Path(__file__).resolve().parent.parent / "openapi.yaml"


def current_schema() -> dict[str, Any]:
    return create_app(Settings(_env_file=None)).openapi()  # type: ignore[call-arg]


def render(schema: dict[str, Any]) -> str:
    return yaml.safe_dump(schema, sort_keys=False, allow_unicode=True, width=100)


def main(argv: list[str]) -> int:
    text = render(current_schema())
    if "--check" in argv:
        if OPENAPI_PATH.read_text(encoding="utf-8") != text:
            print("openapi.yaml is out of date: run python scripts/export_openapi.py")
            return 1
        return 0
    OPENAPI_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {OPENAPI_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
