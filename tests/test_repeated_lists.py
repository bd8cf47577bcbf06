"""Every list that repeats the strategies or the request options, checked against the source.

The registry (`app.service.registry.STRATEGIES`) and the request model
(`app.core.options.compact.CompactOptions`) are where a strategy and an option are declared.
Other places spell them again for their readers: the vocabulary's `Literal`, the OpenAPI
document, the Python client's types, the TypeScript client's generated types, the docs, the
command line's help. A newcomer who adds a strategy or an option is told here, by name,
which of those went stale.
"""

from __future__ import annotations

import argparse
import ast
import re
import typing
from pathlib import Path
from typing import Any, get_args

import pytest

from app.__main__ import _parser
from app.core.options.compact import FORMER_NAMES, CompactOptions
from app.core.vocabulary import STRATEGY_NAMES
from app.service.registry import FALLBACKS, STRATEGIES
from tests.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
SPEC: dict[str, Any] = load_spec()
SCHEMAS: dict[str, Any] = SPEC["components"]["schemas"]
TS_SCHEMA = (ROOT / "clients/typescript/src/schema.d.ts").read_text(encoding="utf-8")
REGISTERED = tuple(STRATEGIES)
OPTIONS = tuple(CompactOptions.model_fields)


def _client_types() -> Any:
    from context_compact_client import _calls, types

    return _calls, types


def _compact_help() -> str:
    """`context-compact compact --help`, without a process."""
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return str(sub.choices["compact"].format_help())


def _literal_values(annotation: object) -> set[str]:
    """The strings of a `Literal[...]` (through `NotRequired`/`Optional` wrappers)."""
    found: set[str] = set()
    for arg in get_args(annotation) or ():
        if isinstance(arg, str):
            found.add(arg)
        else:
            found |= _literal_values(arg)
    return found


def test_the_vocabulary_names_exactly_the_registered_strategies() -> None:
    assert set(STRATEGY_NAMES) == set(REGISTERED)
    assert set(FALLBACKS) == set(REGISTERED)


def test_every_strategy_enum_of_the_spec_is_the_registry() -> None:
    enums = [
        prop["enum"]
        for schema in SCHEMAS.values()
        for name, prop in schema.get("properties", {}).items()
        if name == "strategy" and "enum" in prop
    ]
    assert enums, "the spec lists no strategy enum"
    for enum in enums:
        assert set(enum) == set(REGISTERED), "openapi.yaml: run scripts/export_openapi.py"


def test_the_python_client_s_strategy_types_are_the_registry() -> None:
    calls, types = _client_types()
    hints = [
        calls.Strategy,
        typing.get_type_hints(types.CompactOptions)["strategy"],
        typing.get_type_hints(types.FallbackInfo)["strategy"],
    ]
    for hint in hints:
        assert _literal_values(hint) == set(REGISTERED), "clients/python: the Strategy literals"


def test_the_typescript_client_s_strategy_unions_are_the_registry() -> None:
    unions = re.findall(r"strategy\??: ((?:\"[a-z_]+\"(?: \| )?)+);", TS_SCHEMA)
    assert unions, "clients/typescript/src/schema.d.ts lists no strategy union"
    for union in unions:
        assert set(re.findall(r'"([a-z_]+)"', union)) == set(REGISTERED), (
            "clients/typescript: run npm run generate"
        )


@pytest.mark.parametrize("strategy", REGISTERED)
def test_each_strategy_is_documented_and_in_the_command_line_help(strategy: str) -> None:
    strategies_md = (ROOT / "docs/strategies.md").read_text(encoding="utf-8")
    assert f"| `{strategy}`" in strategies_md, "docs/strategies.md: a row of the table"
    api_md = (ROOT / "docs/api.md").read_text(encoding="utf-8")
    assert f"`{strategy}`" in api_md, "docs/api.md: the strategies of POST /compact"
    help_text = re.search(r"options\.strategy: ([a-z_, ]+)", " ".join(_compact_help().split()))
    assert help_text is not None, "app/__main__.py: the --strategy help"
    assert strategy in help_text.group(1).strip().split(", "), "app/__main__.py: --strategy help"


def test_the_spec_s_options_are_the_request_model_s() -> None:
    assert set(SCHEMAS["CompactOptions"]["properties"]) == set(OPTIONS)


def test_the_python_client_s_options_are_the_request_model_s() -> None:
    _, types = _client_types()
    assert set(typing.get_type_hints(types.CompactOptions)) == set(OPTIONS)


def test_the_typescript_client_s_options_are_the_request_model_s() -> None:
    body = re.search(r"\n        CompactOptions: \{\n(.*?)\n        \};", TS_SCHEMA, re.DOTALL)
    assert body is not None, "clients/typescript/src/schema.d.ts has no CompactOptions"
    names = set(re.findall(r"^            ([a-z_]+)\??:", body.group(1), re.MULTILINE))
    assert names == set(OPTIONS), "clients/typescript: run npm run generate"


@pytest.mark.parametrize("option", [o for o in OPTIONS if o not in FORMER_NAMES])
def test_each_option_is_documented(option: str) -> None:
    docs = "".join(
        (ROOT / "docs" / page).read_text(encoding="utf-8")
        for page in ("api.md", "strategies.md", "summaries.md", "sessions.md")
    )
    named = re.search(rf"`(?:options\.)?{option}(?:[:=][^`]*)?`", docs)
    assert named, f"{option}: not named in docs/api.md, strategies.md, summaries.md or sessions.md"


def _spelled_lists(tree: ast.AST) -> list[int]:
    """Lines of the tuples, lists and sets of string constants naming every strategy."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            names = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            if names >= set(STRATEGY_NAMES):
                found.append(node.lineno)
    return found


def test_the_source_spells_every_strategy_only_in_the_vocabulary() -> None:
    """A new strategy is its module and its name in `StrategyName`: no other list in
    `app/` (a registry, a help text built by hand, a `Literal`) needs its name."""
    spelled = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "app").rglob("*.py"))
        if (lines := _spelled_lists(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert list(spelled) == ["app/core/vocabulary.py"]
