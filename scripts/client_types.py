"""Write the Python client's types that follow the server's declarations
(`clients/python/context_compact_client/_generated.py`) from openapi.yaml: the `Strategy`
names and the `CompactOptions` a request may send. A new strategy or option then changes no
client file by hand (`scripts/regenerate` runs this; a test keeps the file up to date).

Usage: python -m scripts.client_types [--check]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "openapi.yaml"
TARGET = ROOT / "clients/python/context_compact_client/_generated.py"
SCALARS = {"integer": "int", "number": "float", "boolean": "bool", "string": "str"}


def python_type(schema: Mapping[str, Any]) -> str:
    """The annotation of one JSON schema of the spec's request options."""
    if "anyOf" in schema:
        return " | ".join(python_type(s) for s in schema["anyOf"])
    if "enum" in schema:
        return "Literal[" + ", ".join(f'"{v}"' for v in schema["enum"]) + "]"
    kind = schema.get("type")
    if kind == "null":
        return "None"
    if kind == "array":
        return f"list[{python_type(schema['items'])}]"
    return SCALARS[kind]


def render(spec: Mapping[str, Any]) -> str:
    schema = spec["components"]["schemas"]["CompactOptions"]
    properties: dict[str, Any] = schema["properties"]
    strategies = properties["strategy"]["enum"]
    lines = [
        '"""Generated from openapi.yaml by scripts/regenerate (scripts/client_types.py): do not',
        'edit. The request\'s strategies and options, as the server declares them."""',
        "",
        "from typing import Literal, TypedDict",
        "",
        "Strategy = Literal[" + ", ".join(f'"{s}"' for s in strategies) + "]",
        "",
        "",
        "class CompactOptions(TypedDict, total=False):",
        f'    """{schema["description"]}"""',
        "",
    ]
    deprecated = []
    for name, prop in properties.items():
        annotation = "Strategy" if name == "strategy" else python_type(prop)
        line = f"    {name}: {annotation}"
        (deprecated if prop.get("deprecated") else lines).append(line)
    if deprecated:
        lines += [
            "    # Deprecated: former names of options above, still accepted (answers warn).",
            *deprecated,
        ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file differs")
    args = parser.parse_args(argv)
    wanted = render(yaml.safe_load(SPEC.read_text(encoding="utf-8")))
    if args.check:
        if TARGET.read_text(encoding="utf-8") != wanted:
            print(f"{TARGET.relative_to(ROOT)} is out of date: run scripts/regenerate")
            return 1
        return 0
    TARGET.write_text(wanted, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
