"""Every place that repeats the strategies or the request options, checked against where
they are declared, and every stale one reported at once.

The registry (`app.service.registry.STRATEGIES`) and the request model
(`app.core.options.compact.CompactOptions`) are where a strategy and an option are declared.
Other places follow them: the generated ones (openapi.yaml, the configuration table, the
Python client's `_generated.py`, the TypeScript client's `schema.d.ts`: all rewritten by
`scripts/regenerate`), and those written for readers (the docs, the command line's help,
prose that lists the strategies). A newcomer who adds a strategy or an option runs the
suite once and reads here every place left stale, by name.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path
from typing import Any

from app.__main__ import _parser
from app.core.options.compact import CompactOptions
from app.core.vocabulary import STRATEGY_NAMES
from app.service.registry import FALLBACKS, STRATEGIES
from scripts import client_types, config_table, doc_tables, export_openapi

ROOT = Path(__file__).resolve().parent.parent
REGISTERED = tuple(STRATEGIES)
SUMMARIZING = tuple(name for name, s in STRATEGIES.items() if s.summarizes)
OPTIONS = tuple(CompactOptions.model_fields)
REGENERATE = "run scripts/regenerate"
PROSE = ("README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))))
# A list of strategies in prose: three or more names joined by list separators only.
_NAME = "`(?:" + "|".join(re.escape(n) for n in STRATEGY_NAMES) + ")`"
_PROSE_LIST = re.compile(rf"{_NAME}(?:(?:,| and| or|;|, and|, or) {_NAME}){{2,}}")


def _read(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def _generated() -> list[str]:
    stale = []
    if _read("openapi.yaml") != export_openapi.render(export_openapi.current_schema()):
        stale.append(f"openapi.yaml: {REGENERATE}")
    page = _read("docs/configuration.md")
    if page != config_table.replace_table(page, config_table.render(config_table.image_env())):
        stale.append(f"docs/configuration.md: {REGENERATE}")
    spec: dict[str, Any] = __import__("yaml").safe_load(_read("openapi.yaml"))
    if _read(str(client_types.TARGET.relative_to(ROOT))) != client_types.render(spec):
        stale.append(f"clients/python/context_compact_client/_generated.py: {REGENERATE}")
    stale += [f"{p.relative_to(ROOT)} (its table): {REGENERATE}" for p in doc_tables.stale()]
    return stale


def _typescript() -> list[str]:
    schema = _read("clients/typescript/src/schema.d.ts")
    unions = re.findall(r"strategy\??: ((?:\"[a-z_]+\"(?: \| )?)+);", schema)
    body = re.search(r"\n        CompactOptions: \{\n(.*?)\n        \};", schema, re.DOTALL)
    options = set(re.findall(r"^            ([a-z_]+)\??:", body.group(1), re.M)) if body else set()
    strategies_ok = unions and all(
        set(re.findall(r'"([a-z_]+)"', u)) == set(REGISTERED) for u in unions
    )
    if not strategies_ok or options != set(OPTIONS):
        return [f"clients/typescript/src/schema.d.ts: {REGENERATE}"]
    return []


def _compact_help() -> str:
    """`context-compact compact --help`, without a process."""
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return " ".join(str(sub.choices["compact"].format_help()).split())


def _documented() -> list[str]:
    stale = []
    found = re.search(r"options\.strategy: ([a-z_, ]+)", _compact_help())
    in_help = found.group(1).strip().split(", ") if found else []
    for strategy in REGISTERED:
        if strategy not in in_help:
            stale.append(f"app/__main__.py: `{strategy}` in the --strategy help")
    return stale


def prose_lists(text: str) -> list[tuple[int, set[str]]]:
    """Each list of three or more strategies in `text`: its line and the names listed."""
    return [
        (text.count("\n", 0, m.start()) + 1, set(re.findall(r"`([a-z_]+)`", m.group(0))))
        for m in _PROSE_LIST.finditer(text)
    ]


def _prose() -> list[str]:
    """A list of strategies names them all, or the summarizing ones (said so beside it)."""
    stale = []
    for page in PROSE:
        text = _read(page)
        for line, names in prose_lists(text):
            sentence = text.splitlines()[line - 1].lower()
            if names == set(REGISTERED) or (names == set(SUMMARIZING) and "summar" in sentence):
                continue
            stale.append(f"{page}:{line}: lists {sorted(names)}, not every strategy")
    return stale


def _spelled_lists(tree: ast.AST) -> list[int]:
    """Lines of the tuples, lists and sets of string constants naming every strategy."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            names = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            if names >= set(STRATEGY_NAMES):
                found.append(node.lineno)
    return found


def _source() -> list[str]:
    """A new strategy is its module and its name in `StrategyName`: no other list in `app/`
    or `tests/` (a registry, a help text, a parametrize list) spells every strategy."""
    stale = []
    if set(STRATEGY_NAMES) != set(REGISTERED) or set(FALLBACKS) != set(REGISTERED):
        stale.append("app/core/vocabulary.py: `StrategyName` is not the registered strategies")
    for folder in ("app", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = str(path.relative_to(ROOT))
            if relative in ("app/core/vocabulary.py", "tests/test_repeated_lists.py"):
                continue
            for line in _spelled_lists(ast.parse(path.read_text(encoding="utf-8"))):
                stale.append(f"{relative}:{line}: spells every strategy (derive it instead)")
    return stale


def stale_places() -> list[str]:
    return [*_generated(), *_typescript(), *_documented(), *_prose(), *_source()]


def test_no_place_that_repeats_a_strategy_or_an_option_is_stale() -> None:
    assert stale_places() == []


def test_a_prose_list_is_read_as_one_list_with_its_names() -> None:
    text = "one\nrun `full`, `tail` and `prune` here; `tail` alone is not a list\n"
    assert prose_lists(text) == [(2, {"full", "tail", "prune"})]
